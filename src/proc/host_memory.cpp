#include "zerofarm/proc/host_memory.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <vector>

namespace zerofarm::proc {
namespace {

// v1 writes its "no limit" as the largest page-aligned 64-bit count.
constexpr uint64_t kV1NoLimit = uint64_t{1} << 62;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A byte count file of the cgroup filesystem: a decimal number, or "max".
std::optional<uint64_t> ReadBytes(const std::string& path) {
  std::istringstream in(ReadFile(path));
  std::string word;
  if (!(in >> word) || word.find_first_not_of("0123456789") != std::string::npos || word.size() > 19)
    return std::nullopt;
  return std::stoull(word);
}

// mountinfo escapes a space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Hierarchy {
  std::string root;         // the subtree of the hierarchy that is mounted
  std::string mount_point;  // where
  std::string path;         // this process's cgroup in the hierarchy
  const char* limit_file;
  const char* usage_file;
};

bool HasToken(const std::string& list, const std::string& token) {
  std::istringstream in(list);
  std::string t;
  while (std::getline(in, t, ','))
    if (t == token) return true;
  return false;
}

// The memory hierarchies this process is in: v2 and v1's memory controller.
std::vector<Hierarchy> FindHierarchies(const std::string& mountinfo, const std::string& proc_cgroup) {
  std::string v2_path, v1_path;
  std::istringstream cg(proc_cgroup);
  for (std::string line; std::getline(cg, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
    if (id == "0" && controllers.empty()) v2_path = line.substr(b + 1);
    if (HasToken(controllers, "memory")) v1_path = line.substr(b + 1);
  }
  std::vector<Hierarchy> found;
  std::istringstream mi(mountinfo);
  for (std::string line; std::getline(mi, line);) {
    std::istringstream f(line);
    std::vector<std::string> w;
    for (std::string x; f >> x;) w.push_back(x);
    const auto dash = std::find(w.begin(), w.end(), "-");
    if (w.size() < 5 || dash == w.end() || dash + 3 > w.end()) continue;
    const std::string& fstype = *(dash + 1);
    const std::string& super = *(dash + 3);
    if (fstype == "cgroup2" && !v2_path.empty())
      found.push_back({Unescape(w[3]), Unescape(w[4]), v2_path, "memory.max", "memory.current"});
    else if (fstype == "cgroup" && HasToken(super, "memory") && !v1_path.empty())
      found.push_back(
          {Unescape(w[3]), Unescape(w[4]), v1_path, "memory.limit_in_bytes", "memory.usage_in_bytes"});
  }
  return found;
}

// The smallest room over h's cgroup directory and its ancestors up to the mount.
std::optional<uint64_t> RoomIn(const Hierarchy& h) {
  // Only a cgroup inside the mounted subtree is visible under the mount point.
  const bool inside = h.root == "/" || h.path == h.root ||
                      (h.path.compare(0, h.root.size(), h.root) == 0 && h.path[h.root.size()] == '/');
  if (!inside) return std::nullopt;
  std::string rel = h.root == "/" ? h.path : h.path.substr(h.root.size());
  if (rel.find("/..") != std::string::npos) return std::nullopt;
  std::optional<uint64_t> room;
  for (;;) {
    const std::string dir = h.mount_point + rel;
    const auto limit = ReadBytes(dir + "/" + h.limit_file);
    if (limit && *limit < kV1NoLimit) {
      const uint64_t usage = ReadBytes(dir + "/" + h.usage_file).value_or(0);
      const uint64_t here = *limit > usage ? *limit - usage : 0;
      room = room ? std::min(*room, here) : here;
    }
    if (rel.empty() || rel == "/") break;
    rel = rel.substr(0, rel.find_last_of('/'));
  }
  return room;
}

}  // namespace

uint64_t MemAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

std::optional<uint64_t> CgroupMemoryRoomBytes(const std::string& mountinfo, const std::string& proc_cgroup) {
  std::optional<uint64_t> room;
  for (const Hierarchy& h : FindHierarchies(mountinfo, proc_cgroup))
    if (const auto r = RoomIn(h)) room = room ? std::min(*room, *r) : *r;
  return room;
}

std::optional<uint64_t> CgroupMemoryRoomBytes() {
  return CgroupMemoryRoomBytes(ReadFile("/proc/self/mountinfo"), ReadFile("/proc/self/cgroup"));
}

}  // namespace zerofarm::proc
