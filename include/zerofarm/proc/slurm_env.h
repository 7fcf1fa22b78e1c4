#pragma once
// What the environment grants this process (Slurm's variables, else the
// machine's own): its CPUs and its host id in a run.
#include <string>

namespace zerofarm::proc {

// The CPUs this process may use: SLURM_CPUS_PER_TASK when set (a Slurm task),
// else the size of its CPU affinity mask (taskset, cgroups), else the cores online.
int CpusGranted();
// This host's id in a run when --host-id is not given: under Slurm the task's
// number (SLURM_ARRAY_TASK_ID of a job array, times SLURM_NTASKS plus
// SLURM_PROCID when an array task runs several tasks; SLURM_PROCID in a job
// that is not an array), else the hostname. Stable across a requeue.
std::string DefaultHostId();
// ConfigError unless `id` is 1..64 characters of [A-Za-z0-9._-] and not "." or "..".
void CheckHostId(const std::string& id);

}  // namespace zerofarm::proc
