#pragma once
// Owners of a POSIX shared-memory segment (shm_open + mmap, through
// Boost.Interprocess shared_memory_object and mapped_region).
//
//   ShmSegment  the creator (the supervisor): creates the name exclusively with
//               mode 0600, reserves the memory with posix_fallocate (so a full
//               /dev/shm fails here with a clear Error, never with SIGBUS on
//               some later page fault), maps it zero-filled. Its destructor
//               unmaps and unlinks the name.
//   ShmView     an opener (an exec'd evaluator, a test): maps an existing
//               segment after checking it belongs to our euid with mode 0600.
//               Its destructor only unmaps.
//
// Both are move-only; a moved-from object owns nothing and its destructor does
// nothing. A process forked from the owner inherits the mapping (MAP_SHARED) and
// must leave with _exit(), or call Disown(), so it does not unlink the name.
//
// Liveness: the creator keeps one file descriptor of its segment open with a
// shared flock(2) on it for its whole life (forked children inherit it; never
// LOCK_UN it). The kernel drops the lock when the last holder dies, in any PID
// namespace, so RemoveIfStale() can tell a dead run's segment from a live one
// where kill(pid, 0) cannot (containers sharing /dev/shm). ShmView keeps no
// descriptor open.
//
// Names are "/zf-<pid>-<16 hex digits from getrandom()>-<tag>" unless given.
// The mapping is page-aligned. Not thread-safe (the objects; not the memory).
#include <sys/types.h>

#include <boost/interprocess/mapped_region.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zerofarm::shm {

inline constexpr const char* kShmDir = "/dev/shm";
inline constexpr const char* kSegmentPrefix = "zf-";  // every zerofarm name, after the '/'

class ShmSegment {
 public:
  // Creates `name` ("/..." POSIX shm name) of `size` bytes. Throws
  // zerofarm::Error if the name exists or is malformed, if /dev/shm has less
  // free space than `size` (the message names both numbers), or on any other
  // failure; nothing is left behind in /dev/shm when it throws.
  ShmSegment(const std::string& name, size_t size);
  // Creates a segment under a fresh unique name (MakeSegmentName(tag)).
  static ShmSegment Create(const std::string& tag, size_t size);

  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;  // a copy would unlink twice
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();  // unmaps, then unlinks the name

  void* data() const noexcept { return region_.get_address(); }
  size_t size() const noexcept { return region_.get_size(); }
  const std::string& name() const noexcept { return name_; }
  // Forgets the name so the destructor only unmaps (for a forked child that
  // must not unlink its parent's segment). Returns the name.
  std::string Disown() noexcept;

 private:
  std::string name_;  // empty: owns no name
  boost::interprocess::mapped_region region_;
  int lock_fd_ = -1;  // holds the shared flock that proves this segment live
};

class ShmView {
 public:
  // Opens and maps the whole of an existing segment read-write. Throws
  // zerofarm::Error if it does not exist, is not owned by our effective uid,
  // has a mode other than 0600, or is empty.
  explicit ShmView(const std::string& name);

  ShmView(ShmView&& other) noexcept;
  ShmView& operator=(ShmView&& other) noexcept;
  ShmView(const ShmView&) = delete;
  ShmView& operator=(const ShmView&) = delete;
  ~ShmView() = default;  // unmaps (mapped_region's destructor)

  void* data() const noexcept { return region_.get_address(); }
  size_t size() const noexcept { return region_.get_size(); }
  const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
  boost::interprocess::mapped_region region_;
};

// "/zf-<pid>-<random 64-bit hex>-<tag>". The tag is 1-64 characters of
// [A-Za-z0-9_.]; throws Error otherwise (or if getrandom() fails).
std::string MakeSegmentName(const std::string& tag);

// A segment found in /dev/shm.
struct SegmentEntry {
  std::string name;  // with the leading '/', ready for ShmView / RemoveSegment
  uid_t owner_uid = 0;
  uint64_t bytes = 0;
  std::optional<pid_t> creator_pid;  // parsed from "/zf-<pid>-..."; nullopt if not that form
};

// Segments in /dev/shm whose name starts with `prefix` (with or without the
// leading '/'), sorted by name. Entries that vanish while listing are skipped.
// For stale-segment cleanup: remove those owned by us whose creator is dead.
std::vector<SegmentEntry> ListSegments(const std::string& prefix = kSegmentPrefix);

// Unlinks a segment by name (with or without '/'). Returns false if it did not
// exist or could not be removed. Processes that have it mapped keep their mapping.
bool RemoveSegment(const std::string& name) noexcept;

// Unlinks segment `name` only if it is stale: no process holds its creator's
// flock (see above) and it is older than `min_age_s` seconds (its creator
// takes the lock just after creating the name). True if it was removed. Never
// removes a live ShmSegment's name, whatever PID namespace its creator is in.
bool RemoveIfStale(const std::string& name, double min_age_s = 2.0) noexcept;

// The pid in a "/zf-<pid>-..." name, or nullopt.
std::optional<pid_t> SegmentCreatorPid(const std::string& name);

// Free bytes in /dev/shm (statvfs f_bavail * f_frsize), 0 if it cannot be read.
uint64_t ShmFreeBytes() noexcept;

}  // namespace zerofarm::shm
