#include "zerofarm/shm/segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/permissions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

#include "zerofarm/core/error.h"

namespace zerofarm::shm {
namespace bip = boost::interprocess;

namespace {

constexpr mode_t kMode = 0600;

// "1.50 GiB (1610612736 bytes)".
std::string Bytes(uint64_t n) {
  char buf[96];
  const double gib = static_cast<double>(n) / (1024.0 * 1024.0 * 1024.0);
  if (gib >= 1.0) {
    std::snprintf(buf, sizeof buf, "%.2f GiB (%" PRIu64 " bytes)", gib, n);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB (%" PRIu64 " bytes)", gib * 1024.0, n);
  }
  return buf;
}

std::string WithSlash(const std::string& name) {
  return (!name.empty() && name[0] == '/') ? name : "/" + name;
}

void CheckName(const std::string& name) {
  const bool ok =
      name.size() >= 2 && name.size() <= 255 && name[0] == '/' && name.find('/', 1) == std::string::npos;
  if (!ok)
    throw Error("shm: invalid segment name '" + name + "' (want '/' then 1-254 characters without '/')");
}

std::string SpaceMessage(const std::string& name, uint64_t size, uint64_t free_bytes) {
  return "shm: cannot create segment " + name + ": it needs " + Bytes(size) + " but " + kShmDir +
         " has only " + Bytes(free_bytes) +
         " free; enlarge /dev/shm (e.g. docker run --shm-size=...) or lower --workers / --ring-slots";
}

int HandleOf(const bip::shared_memory_object& shm) { return shm.get_mapping_handle().handle; }

}  // namespace

uint64_t ShmFreeBytes() noexcept {
  struct statvfs st;
  if (::statvfs(kShmDir, &st) != 0) return 0;
  return static_cast<uint64_t>(st.f_bavail) * static_cast<uint64_t>(st.f_frsize);
}

std::string MakeSegmentName(const std::string& tag) {
  const bool tag_ok = !tag.empty() && tag.size() <= 64 && std::all_of(tag.begin(), tag.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
  if (!tag_ok) throw Error("shm: invalid segment tag '" + tag + "' (want 1-64 of [A-Za-z0-9_.])");
  uint64_t nonce = 0;
  if (::getrandom(&nonce, sizeof nonce, 0) != static_cast<ssize_t>(sizeof nonce)) {
    throw Error(ErrnoMessage("shm: getrandom for a segment name", errno));
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "/zf-%ld-%016" PRIx64 "-", static_cast<long>(::getpid()), nonce);
  return buf + tag;
}

// ---- ShmSegment ----------------------------------------------------------------

ShmSegment::ShmSegment(const std::string& name, size_t size) {
  CheckName(name);
  if (size == 0) throw Error("shm: cannot create segment " + name + " of 0 bytes");
  // Refuse before touching anything when the space is plainly not there
  // (posix_fallocate would also fail, but only after allocating what it could).
  const uint64_t free_before = ShmFreeBytes();
  if (free_before != 0 && size > free_before) throw Error(SpaceMessage(name, size, free_before));

  bip::permissions perm;
  perm.set_permissions(kMode);
  bip::shared_memory_object shm;
  try {
    bip::shared_memory_object created(bip::create_only, name.c_str(), bip::read_write, perm);
    shm.swap(created);
  } catch (const bip::interprocess_exception& e) {
    throw Error("shm: cannot create segment " + name + ": " + e.what());
  }
  // From here on the name exists: remove it again if anything below fails.
  try {
    const int fd = HandleOf(shm);
    // Boost already fchmods after creation (to undo the umask); be explicit.
    if (::fchmod(fd, kMode) != 0) throw Error(ErrnoMessage("shm: fchmod 0600 " + name, errno));
    // The liveness proof (see segment.h), taken first: a descriptor of our
    // own, locked shared, open until the destructor (or this process's death).
    lock_fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_SH) != 0) {
      const int e = errno;
      if (lock_fd_ >= 0) ::close(lock_fd_);
      lock_fd_ = -1;
      throw Error(ErrnoMessage("shm: flock " + name, e));
    }
    // Reserve every page now (sets the size too) so that a full /dev/shm shows
    // up here rather than as SIGBUS in whichever process touches a page first.
    const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
    if (err == ENOSPC) throw Error(SpaceMessage(name, size, ShmFreeBytes()));
    if (err != 0) throw Error(ErrnoMessage("shm: posix_fallocate " + Bytes(size) + " for " + name, err));
    bip::mapped_region region(shm, bip::read_write);
    region_.swap(region);
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(name.c_str());
    if (lock_fd_ >= 0) ::close(std::exchange(lock_fd_, -1));
    throw Error("shm: cannot map segment " + name + ": " + e.what());
  } catch (...) {
    bip::shared_memory_object::remove(name.c_str());
    if (lock_fd_ >= 0) ::close(std::exchange(lock_fd_, -1));
    throw;
  }
  name_ = name;
  // The fd is closed when `shm` goes out of scope; the mapping stays.
}

ShmSegment ShmSegment::Create(const std::string& tag, size_t size) {
  return ShmSegment(MakeSegmentName(tag), size);
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : name_(std::exchange(other.name_, std::string())), lock_fd_(std::exchange(other.lock_fd_, -1)) {
  region_.swap(other.region_);
}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    ShmSegment old(std::move(*this));  // releases what we held at the end of this scope
    name_ = std::exchange(other.name_, std::string());
    lock_fd_ = std::exchange(other.lock_fd_, -1);
    region_.swap(other.region_);
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  {
    bip::mapped_region gone;
    gone.swap(region_);
  }  // munmap before unlink
  if (!name_.empty()) bip::shared_memory_object::remove(name_.c_str());
  if (lock_fd_ >= 0) ::close(lock_fd_);  // close, never LOCK_UN: forked children share the lock
}

std::string ShmSegment::Disown() noexcept { return std::exchange(name_, std::string()); }

// ---- ShmView -------------------------------------------------------------------

ShmView::ShmView(const std::string& name) : name_(WithSlash(name)) {
  CheckName(name_);
  bip::shared_memory_object shm;
  try {
    bip::shared_memory_object opened(bip::open_only, name_.c_str(), bip::read_write);
    shm.swap(opened);
  } catch (const bip::interprocess_exception& e) {
    throw Error("shm: cannot open segment " + name_ + ": " + e.what());
  }
  struct stat st;
  if (::fstat(HandleOf(shm), &st) != 0) throw Error(ErrnoMessage("shm: fstat " + name_, errno));
  if (st.st_uid != ::geteuid()) {
    throw Error("shm: refusing segment " + name_ + ": owned by uid " + std::to_string(st.st_uid) +
                ", not by us (euid " + std::to_string(::geteuid()) + ")");
  }
  if ((st.st_mode & 07777) != kMode) {
    char mode[16];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw Error("shm: refusing segment " + name_ + ": mode " + mode + ", want 0600");
  }
  if (st.st_size <= 0) throw Error("shm: segment " + name_ + " is empty");
  try {
    bip::mapped_region region(shm, bip::read_write, 0, static_cast<size_t>(st.st_size));
    region_.swap(region);
  } catch (const bip::interprocess_exception& e) {
    throw Error("shm: cannot map segment " + name_ + ": " + e.what());
  }
}

ShmView::ShmView(ShmView&& other) noexcept : name_(std::exchange(other.name_, std::string())) {
  region_.swap(other.region_);
}

ShmView& ShmView::operator=(ShmView&& other) noexcept {
  if (this != &other) {
    ShmView old(std::move(*this));
    name_ = std::exchange(other.name_, std::string());
    region_.swap(other.region_);
  }
  return *this;
}

// ---- listing -------------------------------------------------------------------

std::optional<pid_t> SegmentCreatorPid(const std::string& name) {
  const std::string base = WithSlash(name).substr(1);
  const std::string prefix = kSegmentPrefix;
  if (base.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  size_t i = prefix.size();
  long pid = 0;
  const size_t start = i;
  while (i < base.size() && base[i] >= '0' && base[i] <= '9' && i - start < 10) {
    pid = pid * 10 + (base[i] - '0');
    ++i;
  }
  if (i == start || i >= base.size() || base[i] != '-' || pid <= 0) return std::nullopt;
  return static_cast<pid_t>(pid);
}

std::vector<SegmentEntry> ListSegments(const std::string& prefix) {
  const std::string want = (!prefix.empty() && prefix[0] == '/') ? prefix.substr(1) : prefix;
  std::vector<SegmentEntry> out;
  DIR* dir = ::opendir(kShmDir);
  if (dir == nullptr) throw Error(ErrnoMessage(std::string("shm: opendir ") + kShmDir, errno));
  while (const dirent* ent = ::readdir(dir)) {
    const std::string base = ent->d_name;
    if (base == "." || base == ".." || base.compare(0, want.size(), want) != 0) continue;
    struct stat st;
    if (::fstatat(::dirfd(dir), ent->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished
    if (!S_ISREG(st.st_mode)) continue;
    SegmentEntry e;
    e.name = "/" + base;
    e.owner_uid = st.st_uid;
    e.bytes = static_cast<uint64_t>(st.st_size);
    e.creator_pid = SegmentCreatorPid(e.name);
    out.push_back(std::move(e));
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end(),
            [](const SegmentEntry& a, const SegmentEntry& b) { return a.name < b.name; });
  return out;
}

bool RemoveIfStale(const std::string& name, double min_age_s) noexcept {
  const std::string base = WithSlash(name).substr(1);
  if (base.empty() || base.find('/') != std::string::npos) return false;
  const int dir = ::open(kShmDir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return false;
  const int fd = ::openat(dir, base.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  ::close(dir);
  if (fd < 0) return false;
  bool removed = false;
  struct stat st;
  // A live creator holds LOCK_SH: our LOCK_EX fails with EWOULDBLOCK.
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    struct timespec now;
    ::clock_gettime(CLOCK_REALTIME, &now);
    const double age =
        static_cast<double>(now.tv_sec - st.st_ctim.tv_sec) + 1e-9 * (now.tv_nsec - st.st_ctim.tv_nsec);
    if (age >= min_age_s) removed = RemoveSegment(name);
  }
  ::close(fd);  // drops our lock
  return removed;
}

bool RemoveSegment(const std::string& name) noexcept {
  try {
    return bip::shared_memory_object::remove(WithSlash(name).c_str());
  } catch (...) {
    return false;
  }
}

}  // namespace zerofarm::shm
