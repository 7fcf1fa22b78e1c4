#include "zerofarm/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "zerofarm/core/error.h"

namespace zerofarm::shm {
namespace {

bool Exists(const std::string& name) {
  struct stat st;
  return ::stat((std::string(kShmDir) + name).c_str(), &st) == 0;
}
mode_t ModeOf(const std::string& name) {
  struct stat st;
  REQUIRE(::stat((std::string(kShmDir) + name).c_str(), &st) == 0);
  return st.st_mode & 07777;
}

TEST_CASE("ShmSegment creates a zero-filled 0600 segment under a unique name", "[shm]") {
  const mode_t old_umask = ::umask(0277);  // must still give 0600 (fchmod), not 0400
  ShmSegment seg = ShmSegment::Create("segtest", 1 << 20);
  ::umask(old_umask);
  CHECK(seg.size() == (1u << 20));
  CHECK(seg.name().rfind("/zf-" + std::to_string(::getpid()) + "-", 0) == 0);
  CHECK(seg.name().size() > 20);
  CHECK(seg.name().substr(seg.name().size() - 8) == "-segtest");
  CHECK(reinterpret_cast<uintptr_t>(seg.data()) % 4096 == 0);
  CHECK(Exists(seg.name()));
  CHECK(ModeOf(seg.name()) == 0600);
  const auto* bytes = static_cast<const unsigned char*>(seg.data());
  bool all_zero = true;
  for (size_t i = 0; i < seg.size(); i += 512) all_zero = all_zero && bytes[i] == 0;
  CHECK(all_zero);
  CHECK(SegmentCreatorPid(seg.name()) == ::getpid());
}

TEST_CASE("Segment names are unique", "[shm]") {
  std::set<std::string> names;
  for (int i = 0; i < 1000; ++i) names.insert(MakeSegmentName("x"));
  CHECK(names.size() == 1000);
  CHECK_THROWS_AS(MakeSegmentName("bad/tag"), Error);
  CHECK_THROWS_AS(MakeSegmentName(""), Error);
}

TEST_CASE("Creating an existing name throws and leaves the original alone", "[shm]") {
  ShmSegment a = ShmSegment::Create("dup", 4096);
  static_cast<char*>(a.data())[0] = 'A';
  CHECK_THROWS_AS(ShmSegment(a.name(), 4096), Error);
  CHECK(Exists(a.name()));
  ShmView v(a.name());
  CHECK(static_cast<const char*>(v.data())[0] == 'A');
}

TEST_CASE("ShmView sees the creator's writes and the creator sees the view's", "[shm]") {
  ShmSegment seg = ShmSegment::Create("view", 64 * 1024);
  std::strcpy(static_cast<char*>(seg.data()) + 100, "hello");
  ShmView view(seg.name());
  CHECK(view.size() == seg.size());
  CHECK(view.name() == seg.name());
  CHECK(view.data() != seg.data());  // a second mapping of the same pages
  CHECK(std::string(static_cast<const char*>(view.data()) + 100) == "hello");
  static_cast<char*>(view.data())[5000] = 'z';
  CHECK(static_cast<const char*>(seg.data())[5000] == 'z');
  // The name without the leading slash works as well.
  ShmView view2(seg.name().substr(1));
  CHECK(static_cast<const char*>(view2.data())[5000] == 'z');
}

TEST_CASE("The destructor unlinks but a view keeps its mapping", "[shm]") {
  std::string name;
  std::optional<ShmView> view;
  {
    ShmSegment seg = ShmSegment::Create("dtor", 8192);
    name = seg.name();
    static_cast<char*>(seg.data())[1] = 'q';
    view.emplace(name);
    CHECK(Exists(name));
  }
  CHECK_FALSE(Exists(name));
  CHECK(static_cast<const char*>(view->data())[1] == 'q');
  view.reset();
  CHECK_THROWS_AS(ShmView(name), Error);
}

TEST_CASE("A moved-from segment or view does nothing when destroyed", "[shm]") {
  ShmSegment a = ShmSegment::Create("move", 8192);
  const std::string name = a.name();
  void* data = a.data();
  {
    ShmSegment b(std::move(a));
    CHECK(a.data() == nullptr);  // NOLINT(bugprone-use-after-move): testing the moved-from state
    CHECK(a.name().empty());
    CHECK(b.data() == data);
    CHECK(b.name() == name);
    { ShmSegment gone(std::move(a)); }  // destroying an empty owner: no unlink
    CHECK(Exists(name));
    ShmSegment c = ShmSegment::Create("move2", 4096);
    const std::string c_name = c.name();
    c = std::move(b);  // move-assign releases (unlinks) what c held
    CHECK_FALSE(Exists(c_name));
    CHECK(c.name() == name);
    static_cast<char*>(c.data())[0] = 1;
    ShmView v(name);
    ShmView w(std::move(v));
    { ShmView gone(std::move(v)); }
    CHECK(static_cast<const char*>(w.data())[0] == 1);
  }
  CHECK_FALSE(Exists(name));
}

TEST_CASE("Disown leaves the name in place", "[shm]") {
  std::string name;
  {
    ShmSegment seg = ShmSegment::Create("disown", 4096);
    name = seg.Disown();
  }
  CHECK(Exists(name));
  CHECK(RemoveSegment(name));
  CHECK_FALSE(Exists(name));
  CHECK_FALSE(RemoveSegment(name));
}

TEST_CASE("A request larger than /dev/shm throws a clear error and leaves nothing behind", "[shm]") {
  const uint64_t free_bytes = ShmFreeBytes();
  REQUIRE(free_bytes > 0);
  const std::string name = MakeSegmentName("huge");
  const uint64_t want = free_bytes * 10;
  try {
    ShmSegment seg(name, want);
    FAIL("creating " << want << " bytes succeeded");
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find(name) != std::string::npos);
    CHECK(msg.find("/dev/shm") != std::string::npos);
    CHECK(msg.find(std::to_string(want) + " bytes") != std::string::npos);
    CHECK(msg.find("free") != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
  CHECK_FALSE(Exists(name));
  CHECK_THROWS_AS(ShmSegment(MakeSegmentName("zero"), 0), Error);
  CHECK_THROWS_AS(ShmSegment("no-slash", 4096), Error);
}

TEST_CASE("ShmView refuses a segment whose mode is not 0600", "[shm]") {
  ShmSegment seg = ShmSegment::Create("mode", 4096);
  REQUIRE(::chmod((std::string(kShmDir) + seg.name()).c_str(), 0644) == 0);
  try {
    ShmView v(seg.name());
    FAIL("opened a 0644 segment");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("0644") != std::string::npos);
  }
  CHECK_THROWS_AS(ShmView("/zf-does-not-exist-" + std::to_string(::getpid())), Error);
}

TEST_CASE("ListSegments finds our segments by prefix", "[shm]") {
  ShmSegment a = ShmSegment::Create("lista", 4096);
  ShmSegment b = ShmSegment::Create("listb", 8192);
  const std::string prefix = "/zf-" + std::to_string(::getpid()) + "-";
  const auto entries = ListSegments(prefix);
  int found = 0;
  for (const SegmentEntry& e : entries) {
    CHECK(e.name.rfind(prefix, 0) == 0);
    CHECK(e.creator_pid == ::getpid());
    CHECK(e.owner_uid == ::geteuid());
    if (e.name == a.name()) {
      CHECK(e.bytes == 4096);
      ++found;
    }
    if (e.name == b.name()) {
      CHECK(e.bytes == 8192);
      ++found;
    }
  }
  CHECK(found == 2);
  CHECK(ListSegments("zf-no-such-prefix-").empty());
  CHECK_FALSE(SegmentCreatorPid("/other-123-x").has_value());
  CHECK_FALSE(SegmentCreatorPid("/zf-abc-x").has_value());
  CHECK(SegmentCreatorPid("zf-77-00ff-tag") == 77);
}

TEST_CASE("RemoveIfStale keeps a live creator's segment and removes one whose creator is gone", "[shm]") {
  ShmSegment live = ShmSegment::Create("live", 4096);
  CHECK_FALSE(RemoveIfStale(live.name(), 0.0));  // its creator (this process) holds the lock
  CHECK(Exists(live.name()));
  std::string dead;
  {
    ShmSegment gone = ShmSegment::Create("gone", 4096);
    dead = gone.Disown();  // the name stays, the lock goes with the object
  }
  CHECK(Exists(dead));
  CHECK_FALSE(RemoveIfStale(dead, 3600.0));  // too young to judge
  CHECK(Exists(dead));
  CHECK(RemoveIfStale(dead, 0.0));
  CHECK_FALSE(Exists(dead));
  CHECK_FALSE(RemoveIfStale(dead, 0.0));  // no longer there
  CHECK_FALSE(RemoveIfStale("/zf-../etc", 0.0));
}

}  // namespace
}  // namespace zerofarm::shm
