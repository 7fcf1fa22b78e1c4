#pragma once
// How much memory this process may still take: the host's MemAvailable and
// the room its memory cgroups leave (a container's or a Slurm job's limit,
// which MemAvailable does not show). Read by FarmConfig::ResolveResources to
// size the shared evaluation cache; read-only, no state.
#include <cstdint>
#include <optional>
#include <string>

namespace zerofarm::proc {

// MemAvailable of /proc/meminfo in bytes (0 when unreadable).
uint64_t MemAvailableBytes();

// The smallest (limit - usage) over this process's memory cgroup and its
// ancestors, in bytes (0 where usage is at or above a limit): cgroup v2's
// memory.max / memory.current and v1's memory.limit_in_bytes /
// memory.usage_in_bytes, found through the cgroup mounts of `mountinfo`
// (/proc/self/mountinfo's text, so that a container's mount of its own
// subtree is read right) and the paths of `proc_cgroup` (/proc/self/cgroup's).
// std::nullopt where no limit is set or none can be read. v1's "unlimited"
// (a limit of 2^62 bytes or more) is no limit.
std::optional<uint64_t> CgroupMemoryRoomBytes(const std::string& mountinfo, const std::string& proc_cgroup);
// The same for this process.
std::optional<uint64_t> CgroupMemoryRoomBytes();

}  // namespace zerofarm::proc
