#pragma once
// How much memory this process may still take: the host's MemAvailable and
// the room its memory cgroups leave (a container's or a Slurm job's limit,
// which MemAvailable does not show). Read by FarmConfig::ResolveResources to
// size the shared evaluation cache. Read-only, no state; never throws (what
// cannot be read counts as unknown).
#include <cstdint>
#include <optional>
#include <string>

namespace zerofarm::proc {

// MemAvailable of /proc/meminfo in bytes (0 when unreadable).
uint64_t MemAvailableBytes();

// The smallest (limit - usage) over this process's memory cgroup and its
// ancestors as far as they are mounted (a container sees its own subtree
// only), in bytes; 0 where usage is at or above a limit. Limits: cgroup v2's
// memory.max, v1's memory.limit_in_bytes (memory.high, a throttle, is not
// one). Usage: memory.current or memory.usage_in_bytes less the reclaimable
// page cache of memory.stat (inactive_file, v1 total_inactive_file), as
// MemAvailable counts it. Both hierarchies are read where both hold memory (a
// hybrid host). The cgroups are found through the cgroup mounts of
// `mountinfo` (/proc/self/mountinfo's text: each mount's root and mount
// point) and the paths of `proc_cgroup` (/proc/self/cgroup's). std::nullopt
// where no limit is set or none can be read; a limit of 2^62 bytes or more
// (v1's "unlimited") is none.
std::optional<uint64_t> CgroupMemoryRoomBytes(const std::string& mountinfo, const std::string& proc_cgroup);
// The same for this process.
std::optional<uint64_t> CgroupMemoryRoomBytes();

}  // namespace zerofarm::proc
