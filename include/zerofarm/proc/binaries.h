#pragma once
// Which binary runs what, and where to find it.
#include <string>

namespace zerofarm::proc {

// The two binaries of a build (src/CMakeLists.txt): `zerofarm`, with no
// LibTorch, runs the supervisor and forks the workers and the writer; the
// commands that run a network, the evaluator role among them, run in
// eval::kTorchBinary. Each hands the other's commands over by exec (same pid,
// same arguments).
inline constexpr const char* kFarmBinary = "zerofarm";
// This process's binary (/proc/self/exe, through RunnablePath); Error when
// unreadable.
std::string SelfBinary();
// What to exec for a binary whose /proc/PID/exe link reads EXE_LINK. When the
// file was replaced while the process ran (a rebuild: the linker unlinks the
// old file and writes a new one), the kernel appends " (deleted)" to the link
// and that name can no longer be exec'd; then the path without the suffix, if
// an executable file is there now (the new build). Otherwise EXE_LINK as is.
std::string RunnablePath(const std::string& exe_link);
// NAME in the directory of this process's binary.
std::string SiblingBinary(const std::string& name);
// The binary that runs a network: this one when it links LibTorch; else
// eval::kTorchBinary beside it when the build has LibTorch (Error when that
// file is missing); else this one (a build without LibTorch: the random
// evaluator).
std::string NetworkBinary();
// The binary that runs a farm's supervisor: kFarmBinary beside this one when
// it is there, else this one.
std::string FarmBinary();

// The hand-over check: a `zerofarm` and a `zerofarm-torch` from different
// builds (one rebuilt, the other not) disagree on options, and the child a
// command starts would refuse the other's config keys mid-run. So the binary
// that hands a command over names its option table (OptionTableFingerprint)
// in this variable, set just before the exec; the binary that receives it
// compares, removes the variable (so the processes it starts do not inherit
// it: a loop may start a farm from binaries rebuilt under it), and refuses a
// mismatch before it does anything.
inline constexpr const char* kHandOverEnv = "ZF_HANDOVER_OPTIONS";
// Sets kHandOverEnv to this binary's fingerprint. Call just before the exec.
void MarkHandOver();
// When kHandOverEnv is set: removes it, and throws ConfigError (exit 2) naming
// both binaries and "rebuild both" when it is not this binary's fingerprint.
// `command`: what was handed over, for the message.
void CheckHandOver(const std::string& command);

}  // namespace zerofarm::proc
