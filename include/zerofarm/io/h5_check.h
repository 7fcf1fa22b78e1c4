#pragma once
// HDF5 files from others, read first in a checker process (docs/reliability.md).
//
// Debian 12's libhdf5 (1.10.8) crashes on some damaged files in its own code
// (SEGV, heap overflows, petabyte allocations: docs/results/fuzz-2026-12-04/),
// which no check in zerofarm can prevent. So before a command reads a weights
// file or shards that others may have written, a checker process reads them
// the same way (`zerofarm __check-h5 KIND FILE...`, started with posix_spawn,
// which is safe in a process that runs threads); the command then reads only
// what the checker read whole without error. A file that kills the checker
// is refused in one line naming it; the next checker goes on with the rest.
// The checker bounds its CPU time per file (a read that loops) and, outside
// sanitizer builds, its address space (a read that eats memory).
//
// A file changed between the check and the read is not covered: shards are
// renamed into place complete and never rewritten, weights files likewise.
#include <functional>
#include <string>
#include <vector>

namespace zerofarm::io {

// What the checker reads of each file, as the command will:
enum class H5CheckKind {
  kWeights,     // ReadWeights (a .pt model has no HDF5: not checked)
  kShardMeta,   // the ShardReader constructor (root attributes, shapes)
  kShardGames,  // and ReadGames
  kShard,       // and ReadGames and ReadAllPositions: every byte a command reads
};

// The internal command word (cli::Main runs RunH5Check for it).
inline constexpr const char* kCheckH5Command = "__check-h5";

// How to start the checker: its argv (binary, kCheckH5Command; argv[0] is
// replaced by "zf-check-h5" for ps) and "K=V" variables added to the
// environment.
struct H5Checker {
  std::vector<std::string> argv;
  std::vector<std::string> env;
};
// Installs the function that names the checker, called at each check (so a
// rebuilt binary is found). Unset (the default): files are read in this process
// alone, unchecked (the test executables, the fuzz targets, the checker
// itself). Call once, before threads start (cli::Main).
void SetH5Checker(std::function<H5Checker()> checker);
bool H5CheckerSet();

// One verdict per path, in order: "" when the checker read it whole without
// error; else one line naming the file, its own error ("W.h5: not an HDF5
// file or truncated") or "S.h5: refused: reading it crashed libhdf5 (killed
// by signal 11 (Segmentation fault)); a damaged or hostile file". At most 256
// files per checker process. All "" when no checker is set. Throws Error
// when the checker cannot be started or does not answer (not a file's fault).
std::vector<std::string> CheckH5Files(H5CheckKind kind, const std::vector<std::string>& paths);

// Whether `verdict`, CheckH5Files's for `path`, says the file killed the
// checker (a crash, or its CPU or memory limit), not merely that it is no shard.
bool VerdictIsCrash(const std::string& path, const std::string& verdict);

// Renames `path` (a file that crashed the checker) within its directory to
// PATH.refused, or PATH.refused.2 .. PATH.refused.99 where taken (never over
// a file; a link is renamed, not followed), so no reader of this host reads
// it again and nothing is lost. Returns the new path; Error when it cannot.
std::string SetAside(const std::string& path);

// The farm's own recovery reads of files another process wrote (the writer's
// manifest repair and last shard, the supervisor's .tmp shards), where a
// crash would stop the run at every start: one verdict per path, as
// CheckH5Files gives, each file that crashed the checker set aside first
// (its verdict then ends "; kept as PATH.refused"). Throws as CheckH5Files.
std::vector<std::string> CheckOwnFiles(H5CheckKind kind, const std::vector<std::string>& paths);

// CheckH5Files for a loop over `paths` that may stop early (`export --limit`):
// the verdicts of `ahead` files at a time, asked for as the loop reaches them.
class H5CheckAhead {
 public:
  H5CheckAhead(H5CheckKind kind, std::vector<std::string> paths, size_t ahead = 16)
      : kind_(kind), paths_(std::move(paths)), ahead_(ahead < 1 ? 1 : ahead) {}
  // paths()[i]'s verdict; checks it and the next ahead - 1 when not known yet.
  const std::string& Verdict(size_t i);
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  H5CheckKind kind_;
  std::vector<std::string> paths_;
  size_t ahead_;
  std::vector<std::string> verdicts_;  // of paths_[0, verdicts_.size())
};

// The checker's side, argv = {kCheckH5Command, KIND, FILE...}: reads each
// file, writes a line per file to stdout, and leaves with _exit (no exit
// handlers: libhdf5's may crash on a damaged file left open). ConfigError for
// a bad argv.
int RunH5Check(int argc, const char* const* argv);

}  // namespace zerofarm::io
