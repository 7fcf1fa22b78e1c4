// The memory a farm may take (proc/host_memory.h): the room the process's
// memory cgroups leave, read through fixture cgroup trees as the kernel lays
// them out (v2, v1, a container's mount of its own subtree) and on this host.
#include "zerofarm/proc/host_memory.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "test_paths.h"

using namespace zerofarm::proc;
using zerofarm::testing::ScratchDir;

namespace {

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text << "\n";
}

// One /proc/self/mountinfo line of a cgroup mount.
std::string MountLine(const std::string& root, const std::string& mount_point, const std::string& fstype,
                      const std::string& super) {
  return "30 25 0:26 " + root + " " + mount_point + " rw,nosuid shared:4 - " + fstype + " cgroup " + super +
         "\n";
}

constexpr uint64_t kMiB = uint64_t{1} << 20;

}  // namespace

TEST_CASE("cgroup v2: the tightest limit less usage over the cgroup and its ancestors", "[proc]") {
  ScratchDir d("zf-cgroup");
  const std::string m = d.path();
  Write(m + "/job/memory.max", std::to_string(1024 * kMiB));
  Write(m + "/job/memory.current", std::to_string(256 * kMiB));
  Write(m + "/job/step/memory.max", "max");
  Write(m + "/job/step/memory.current", std::to_string(200 * kMiB));
  const std::string mountinfo = MountLine("/", m, "cgroup2", "rw") + "22 1 8:1 / / rw - ext4 /dev/vda1 rw\n";
  CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/job/step\n") == 768 * kMiB);

  // A child's own limit, tighter than the parent's room, wins.
  Write(m + "/job/step/memory.max", std::to_string(300 * kMiB));
  CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/job/step\n") == 100 * kMiB);
  // Usage at or over a limit leaves no room, not a wrapped-around one.
  Write(m + "/job/step/memory.current", std::to_string(400 * kMiB));
  CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/job/step\n") == uint64_t{0});
  // "max" everywhere, or no limit files: no limit.
  CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/elsewhere\n") == std::nullopt);
}

TEST_CASE("cgroup v1: the memory controller's limit, its 'unlimited' value, and a container's own mount",
          "[proc]") {
  ScratchDir d("zf-cgroup");
  const std::string m = d.path() + "/memory";
  const std::string cgroup = "12:pids:/\n4:memory:/docker/abc\n0::/\n";
  Write(m + "/docker/abc/memory.limit_in_bytes", std::to_string(512 * kMiB));
  Write(m + "/docker/abc/memory.usage_in_bytes", std::to_string(12 * kMiB));
  Write(m + "/docker/memory.limit_in_bytes", "9223372036854771712");  // v1's unlimited
  Write(m + "/memory.limit_in_bytes", "9223372036854771712");
  const std::string host_view = MountLine("/", m, "cgroup", "rw,memory");
  CHECK(CgroupMemoryRoomBytes(host_view, cgroup) == 500 * kMiB);
  // Another controller's mount is not the memory one.
  CHECK(CgroupMemoryRoomBytes(MountLine("/", m, "cgroup", "rw,cpu,cpuacct"), cgroup) == std::nullopt);

  // Inside the container its own cgroup is mounted as the mount's root (the
  // mount's root field says so): the limit files sit at the mount point.
  ScratchDir c("zf-cgroup");
  Write(c.path() + "/memory.limit_in_bytes", std::to_string(64 * kMiB));
  Write(c.path() + "/memory.usage_in_bytes", std::to_string(16 * kMiB));
  CHECK(CgroupMemoryRoomBytes(MountLine("/docker/abc", c.path(), "cgroup", "rw,memory"), cgroup) ==
        48 * kMiB);
  // A mount of a subtree the process is not in (a prefix of its name only) says nothing.
  CHECK(CgroupMemoryRoomBytes(MountLine("/dock", c.path(), "cgroup", "rw,memory"), cgroup) == std::nullopt);
}

TEST_CASE("cgroup: unreadable or malformed input is no limit, and this host's answer is consistent",
          "[proc]") {
  CHECK(CgroupMemoryRoomBytes("", "") == std::nullopt);
  CHECK(CgroupMemoryRoomBytes("garbage - cgroup2\n", "0::/x\n") == std::nullopt);
  ScratchDir d("zf-cgroup");
  Write(d / "x/memory.max", "12abc");
  CHECK(CgroupMemoryRoomBytes(MountLine("/", d.path(), "cgroup2", "rw"), "0::/x\n") == std::nullopt);
  // A mount point with a space, escaped as mountinfo writes it.
  ScratchDir s("zf-cgroup");
  Write(s / "a b/x/memory.max", std::to_string(8 * kMiB));
  CHECK(CgroupMemoryRoomBytes(MountLine("/", s / "a\\040b", "cgroup2", "rw"), "0::/x\n") == 8 * kMiB);

  CHECK(MemAvailableBytes() > 0);
  const auto room = CgroupMemoryRoomBytes();
  if (room) CHECK(*room < (uint64_t{1} << 62));  // a limit read, not v1's "unlimited"
}
