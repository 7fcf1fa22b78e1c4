#pragma once
// Exit codes of every zerofarm process. The supervisor decides from a child's
// code whether to restart it (kExitCrash, signals) or to stop the run.
namespace zerofarm {
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // a run-time error (I/O, a crash loop, a NaN model, ...)
inline constexpr int kExitUsage = 2;     // invalid command line or config value
inline constexpr int kExitCrash = 3;     // an uncaught exception in a child; restartable
inline constexpr int kExitNoSpace = 4;   // the output disk is full (ENOSPC); not restartable
inline constexpr int kExitPeerGone = 5;  // a child found its supervisor gone
}  // namespace zerofarm
