#include "zerofarm/proc/host_memory.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "zerofarm/core/error.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/safe_files.h"

namespace zerofarm::proc {
namespace {

// A limit at or above this is no limit: v1 writes its "unlimited" as
// 2^63 less a page; v2 writes "max", which ReadBytes reads as none.
constexpr uint64_t kNoLimit = uint64_t{1} << 62;

// A kernel file, read without following a link, at most `max_bytes`: nullopt
// when missing, unreadable or larger (a cgroup file is tens of bytes;
// mountinfo on a busy node a few hundred KiB).
std::optional<std::string> ReadKernelFile(const std::string& path, size_t max_bytes) {
  try {
    return io::ReadRunFile(path, max_bytes);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<uint64_t> ParseBytes(const std::string& word) {
  if (word.empty() || word.size() > 19 || word.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(word);  // 19 digits cannot overflow 64 bits
}

// A byte count file of the cgroup filesystem: a decimal number, or "max" (none).
std::optional<uint64_t> ReadBytes(const std::string& path) {
  std::istringstream in(ReadKernelFile(path, 64).value_or(""));
  std::string word;
  in >> word;
  return ParseBytes(word);
}

// The value of `key` in a memory.stat file ("key value" lines), 0 when absent.
uint64_t ReadStat(const std::string& path, const std::string& key) {
  std::istringstream in(ReadKernelFile(path, 1 << 16).value_or(""));
  std::string k, v;
  while (in >> k >> v)
    if (k == key) return ParseBytes(v).value_or(0);
  return 0;
}

// mountinfo writes a space, tab, newline and backslash as \ooo (three octal digits).
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool octal =
        s[i] == '\\' && i + 3 < s.size() &&
        std::all_of(s.begin() + i + 1, s.begin() + i + 4, [](char c) { return c >= '0' && c <= '7'; });
    if (!octal) {
      out += s[i];
      continue;
    }
    out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
    i += 3;
  }
  return out;
}

struct Hierarchy {
  std::string root;         // the subtree of the hierarchy that is mounted
  std::string mount_point;  // where
  std::string path;         // this process's cgroup in the hierarchy
  bool v2;
};

bool HasToken(const std::string& list, const std::string& token) {
  const auto tokens = io::SplitFields(list);
  return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
}

// This process's cgroup paths (/proc/self/cgroup: "id:controllers:path"):
// v2's ("0::path") and v1 memory controller's.
void FindPaths(const std::string& proc_cgroup, std::string& v2_path, std::string& v1_path) {
  std::istringstream cg(proc_cgroup);
  for (std::string line; std::getline(cg, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
    if (id == "0" && controllers.empty()) v2_path = line.substr(b + 1);
    if (HasToken(controllers, "memory")) v1_path = line.substr(b + 1);
  }
}

// The memory hierarchies this process is in, with where each is mounted.
std::vector<Hierarchy> FindHierarchies(const std::string& mountinfo, const std::string& proc_cgroup) {
  std::string v2_path, v1_path;
  FindPaths(proc_cgroup, v2_path, v1_path);
  std::vector<Hierarchy> found;
  std::istringstream mi(mountinfo);
  for (std::string line; std::getline(mi, line);) {
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    std::istringstream f(line);
    std::vector<std::string> w;
    for (std::string x; f >> x;) w.push_back(x);
    const auto dash = std::find(w.begin(), w.end(), "-");
    if (dash - w.begin() < 6 || w.end() - dash < 4) continue;
    const std::string& fstype = *(dash + 1);
    const std::string& super = *(dash + 3);
    if (fstype == "cgroup2" && !v2_path.empty())
      found.push_back({Unescape(w[3]), Unescape(w[4]), v2_path, true});
    else if (fstype == "cgroup" && HasToken(super, "memory") && !v1_path.empty())
      found.push_back({Unescape(w[3]), Unescape(w[4]), v1_path, false});
  }
  return found;
}

// The part of h.path under its mount's root ("" for the root itself), or
// nullopt when the cgroup is outside the mounted subtree or the path has a
// ".." component.
std::optional<std::string> RelativePath(const Hierarchy& h) {
  std::string rel;
  if (h.root == "/")
    rel = h.path == "/" ? "" : h.path;
  else if (h.path == h.root)
    rel = "";
  else if (h.path.compare(0, h.root.size(), h.root) == 0 && h.path.size() > h.root.size() &&
           h.path[h.root.size()] == '/')
    rel = h.path.substr(h.root.size());
  else
    return std::nullopt;
  for (const std::string& part : io::SplitFields(rel, '/'))
    if (part == "..") return std::nullopt;
  return rel;
}

// The room one cgroup directory's limit leaves, nullopt without a limit.
// Reclaimable page cache (inactive_file) does not count as used.
std::optional<uint64_t> RoomAt(const std::string& dir, bool v2) {
  const auto limit = ReadBytes(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
  if (!limit || *limit >= kNoLimit) return std::nullopt;
  uint64_t usage = ReadBytes(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes")).value_or(0);
  usage -= std::min(usage, ReadStat(dir + "/memory.stat", v2 ? "inactive_file" : "total_inactive_file"));
  return *limit > usage ? *limit - usage : 0;
}

// The smallest room over h's cgroup directory and its ancestors up to the mount point.
std::optional<uint64_t> RoomIn(const Hierarchy& h) {
  auto rel = RelativePath(h);
  if (!rel) return std::nullopt;
  std::optional<uint64_t> room;
  for (;;) {
    if (const auto here = RoomAt(h.mount_point + *rel, h.v2)) room = room ? std::min(*room, *here) : *here;
    if (rel->empty()) break;
    rel->resize(rel->find_last_of('/'));  // "/a/b" -> "/a" -> ""
  }
  return room;
}

}  // namespace

uint64_t MemAvailableBytes() {
  std::istringstream in(ReadKernelFile("/proc/meminfo", 1 << 16).value_or(""));
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string key, kib;
    if (f >> key >> kib && key == "MemAvailable:") return ParseBytes(kib).value_or(0) * 1024;
  }
  return 0;
}

std::optional<uint64_t> CgroupMemoryRoomBytes(const std::string& mountinfo, const std::string& proc_cgroup) {
  std::optional<uint64_t> room;
  for (const Hierarchy& h : FindHierarchies(mountinfo, proc_cgroup))
    if (const auto r = RoomIn(h)) room = room ? std::min(*room, *r) : *r;
  return room;
}

std::optional<uint64_t> CgroupMemoryRoomBytes() {
  return CgroupMemoryRoomBytes(ReadKernelFile("/proc/self/mountinfo", 16 << 20).value_or(""),
                               ReadKernelFile("/proc/self/cgroup", 1 << 16).value_or(""));
}

}  // namespace zerofarm::proc
