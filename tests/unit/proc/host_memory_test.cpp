// The memory a farm may take (proc/host_memory.h): the room the process's
// memory cgroups leave, read through fixture cgroup trees laid out as the
// kernel lays them out (v2, v1, a hybrid host, a container's mount of its own
// subtree), and on this host.
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
std::string MiB(uint64_t n) { return std::to_string(n * kMiB); }

}  // namespace

TEST_CASE("cgroup v2: the tightest limit less usage over the cgroup and its ancestors", "[proc][memory]") {
  ScratchDir d("zf-cgroup");
  const std::string m = d.path();
  Write(m + "/job/memory.max", MiB(1024));
  Write(m + "/job/memory.current", MiB(256));
  Write(m + "/job/step/memory.max", "max");
  Write(m + "/job/step/memory.current", MiB(200));
  const std::string mountinfo = MountLine("/", m, "cgroup2", "rw") + "22 1 8:1 / / rw - ext4 /dev/vda1 rw\n";
  CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/job/step\n") == 768 * kMiB);

  SECTION("a child's own limit, tighter than its parent's room, wins") {
    Write(m + "/job/step/memory.max", MiB(300));
    CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/job/step\n") == 100 * kMiB);
    // Usage at or over a limit leaves no room, not a wrapped-around one.
    Write(m + "/job/step/memory.current", MiB(400));
    CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/job/step\n") == uint64_t{0});
  }
  SECTION("reclaimable page cache is not counted as used") {
    Write(m + "/job/memory.stat",
          "anon 1000\nfile 300000000\ninactive_file " + MiB(100) + "\nactive_file 5\n");
    CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/job/step\n") == 868 * kMiB);
  }
  SECTION("the mount point's own limit counts for a cgroup deep below it") {
    Write(m + "/memory.max", MiB(2048));
    Write(m + "/memory.current", MiB(1948));
    CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/job/step\n") == 100 * kMiB);
  }
  SECTION("no limit anywhere on the path is no limit") {
    CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/elsewhere\n") == std::nullopt);
  }
  SECTION("a path with a '..' component is not followed; a name that starts with dots is a name") {
    Write(m + "/..job/memory.max", MiB(64));
    CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/..job\n") == 64 * kMiB);
    CHECK(CgroupMemoryRoomBytes(mountinfo, "0::/elsewhere/../job\n") == std::nullopt);
  }
}

TEST_CASE("cgroup v1: the memory controller's limit, its 'unlimited' value, and a container's own mount",
          "[proc][memory]") {
  ScratchDir d("zf-cgroup");
  const std::string m = d.path() + "/memory";
  const std::string cgroup = "12:pids:/\n4:memory:/docker/abc\n";
  Write(m + "/docker/abc/memory.limit_in_bytes", MiB(512));
  Write(m + "/docker/abc/memory.usage_in_bytes", MiB(40));
  Write(m + "/docker/abc/memory.stat", "cache 1\ntotal_inactive_file " + MiB(28) + "\n");
  Write(m + "/docker/memory.limit_in_bytes", "9223372036854771712");  // v1's unlimited
  Write(m + "/memory.limit_in_bytes", "9223372036854771712");
  CHECK(CgroupMemoryRoomBytes(MountLine("/", m, "cgroup", "rw,memory"), cgroup) == 500 * kMiB);
  // Another controller's mount is not the memory one.
  CHECK(CgroupMemoryRoomBytes(MountLine("/", m, "cgroup", "rw,cpu,cpuacct"), cgroup) == std::nullopt);

  // Inside the container its own cgroup is mounted as the mount's root (the
  // mount's root field says so): the limit files sit at the mount point.
  ScratchDir c("zf-cgroup");
  Write(c.path() + "/memory.limit_in_bytes", MiB(64));
  Write(c.path() + "/memory.usage_in_bytes", MiB(16));
  CHECK(CgroupMemoryRoomBytes(MountLine("/docker/abc", c.path(), "cgroup", "rw,memory"), cgroup) ==
        48 * kMiB);
  // A mount of a subtree the process is not in (a prefix of its name only) says nothing.
  CHECK(CgroupMemoryRoomBytes(MountLine("/dock", c.path(), "cgroup", "rw,memory"), cgroup) == std::nullopt);
}

TEST_CASE("cgroup on a hybrid host: v1's memory controller and v2 both read, the tighter wins",
          "[proc][memory]") {
  ScratchDir d("zf-cgroup");
  const std::string v1 = d / "memory", v2 = d / "unified";
  const std::string cgroup = "9:name=systemd:/\n4:memory:/slurm/job7\n0::/slurm/job7\n";
  const std::string mountinfo =
      MountLine("/", v1, "cgroup", "rw,memory") + MountLine("/", v2, "cgroup2", "rw,nsdelegate");
  Write(v1 + "/slurm/job7/memory.limit_in_bytes", MiB(512));
  Write(v1 + "/slurm/job7/memory.usage_in_bytes", MiB(12));
  std::filesystem::create_directories(v2 + "/slurm/job7");  // v2 without the memory controller
  CHECK(CgroupMemoryRoomBytes(mountinfo, cgroup) == 500 * kMiB);
  Write(v2 + "/slurm/job7/memory.max", MiB(256));
  CHECK(CgroupMemoryRoomBytes(mountinfo, cgroup) == 256 * kMiB);
}

TEST_CASE("cgroup: malformed input is no limit and throws nothing, and escapes decode in both paths",
          "[proc][memory]") {
  CHECK(CgroupMemoryRoomBytes("", "") == std::nullopt);
  CHECK(CgroupMemoryRoomBytes("garbage - cgroup2\n", "0::/x\n") == std::nullopt);
  CHECK(CgroupMemoryRoomBytes("30 25 0:26 / /x - cgroup2 none\n", "0::/x\n") == std::nullopt);  // no options
  CHECK(CgroupMemoryRoomBytes("30 25 0:26 / /x rw shared:4 - cgroup2\n", "0::/x\n") == std::nullopt);
  ScratchDir d("zf-cgroup");
  Write(d / "x/memory.max", "12abc");
  CHECK(CgroupMemoryRoomBytes(MountLine("/", d.path(), "cgroup2", "rw"), "0::/x\n") == std::nullopt);
  CHECK_NOTHROW(CgroupMemoryRoomBytes(MountLine("/", d / "\\9ab", "cgroup2", "rw"), "0::/x\n"));

  // A mount point and a mount root with a space, escaped as mountinfo writes them.
  ScratchDir s("zf-cgroup");
  Write(s / "a b/x/memory.max", MiB(8));
  CHECK(CgroupMemoryRoomBytes(MountLine("/", s / "a\\040b", "cgroup2", "rw"), "0::/x\n") == 8 * kMiB);
  CHECK(CgroupMemoryRoomBytes(MountLine("/j\\040k", s / "a\\040b/x", "cgroup2", "rw"), "0::/j k\n") ==
        8 * kMiB);
}

TEST_CASE("this host's memory: MemAvailable is read, and the cgroup reading throws nothing",
          "[proc][memory]") {
  CHECK(MemAvailableBytes() > 0);
  CHECK_NOTHROW(CgroupMemoryRoomBytes());
}
