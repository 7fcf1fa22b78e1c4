// HDF5 files read first in a checker process (include/zerofarm/io/h5_check.h).
#include "zerofarm/io/h5_check.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "zerofarm/core/error.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/io/weights_file.h"

extern char** environ;

namespace zerofarm::io {

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr size_t kFilesPerChecker = 128;    // argv stays far below ARG_MAX
constexpr rlim_t kCpuSecondsPerFile = 300;  // a read that loops; a real one takes seconds
const char* const kTag = "zf-check-h5 ";    // the protocol's lines begin with it
const char* const kCrashed = ": refused: reading it crashed libhdf5 (";  // after the path

std::function<H5Checker()>& Checker() {
  static std::function<H5Checker()> checker;
  return checker;
}

const char* KindName(H5CheckKind kind) {
  switch (kind) {
    case H5CheckKind::kWeights:
      return "weights";
    case H5CheckKind::kShardMeta:
      return "shard-meta";
    case H5CheckKind::kShardGames:
      return "shard-games";
    case H5CheckKind::kShard:
      return "shard";
  }
  return "?";
}

H5CheckKind KindOf(const std::string& name) {
  for (H5CheckKind k :
       {H5CheckKind::kWeights, H5CheckKind::kShardMeta, H5CheckKind::kShardGames, H5CheckKind::kShard})
    if (name == KindName(k)) return k;
  throw ConfigError(std::string(kCheckH5Command) + ": unknown kind '" + name + "' (internal)");
}

// ---- the checker's side -------------------------------------------------------

void WriteLine(std::string line) {
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  line = kTag + line + "\n";
  for (size_t done = 0; done < line.size();) {  // one write: nothing else writes meanwhile
    const ssize_t n = ::write(1, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(1);  // the caller is gone
    done += static_cast<size_t>(n);
  }
}

// The soft CPU limit `seconds` from now: SIGXCPU ends a read that loops.
void LimitCpuFromNow(rlim_t seconds) {
  rusage used{};
  ::getrusage(RUSAGE_SELF, &used);
  rlimit limit{};
  ::getrlimit(RLIMIT_CPU, &limit);
  limit.rlim_cur = static_cast<rlim_t>(used.ru_utime.tv_sec + used.ru_stime.tv_sec + 1) + seconds;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_cur > limit.rlim_max) limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_CPU, &limit);
}

// Half the machine's memory as the checker's address space: a read that
// allocates without bound fails there, not in the machine's OOM killer.
// Sanitizers reserve terabytes of shadow memory: no limit under them.
void LimitAddressSpace() {
  if (kSanitized) return;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;
  rlimit limit{};
  ::getrlimit(RLIMIT_AS, &limit);
  const auto half = static_cast<rlim_t>(pages) / 2 * static_cast<rlim_t>(page);
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > half) limit.rlim_cur = half;
  ::setrlimit(RLIMIT_AS, &limit);
}

void ReadAsCommandWould(H5CheckKind kind, const std::string& path) {
  if (kind == H5CheckKind::kWeights) {
    ReadWeights(path);
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))  // a FIFO would block the open
    throw Error(path + " is not a zerofarm shard (not a regular file)");
  const ShardReader reader(path);
  if (kind == H5CheckKind::kShardMeta) return;
  reader.ReadGames();
  if (kind == H5CheckKind::kShard) reader.ReadAllPositions();
}

// ---- the caller's side --------------------------------------------------------

// "exit code 3", "killed by signal 11 (Segmentation fault)".
std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "status " + std::to_string(status);
}

// A death that stopping the command explains, not the file being read.
bool StoppedFromOutside(int status) {
  if (!WIFSIGNALED(status)) return false;
  const int sig = WTERMSIG(status);
  return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT || sig == SIGPIPE;
}

// What one checker process said.
struct CheckerRun {
  bool ready = false;
  std::vector<std::string> verdicts;  // one per file it finished, in order
  std::string other;                  // its last line outside the protocol (a crash report, an error)
  int status = 0;
};

void ParseLine(const std::string& line, CheckerRun* run) {
  const std::string tag = kTag;
  if (line.compare(0, tag.size(), tag) != 0) {
    if (!line.empty()) run->other = line.substr(0, 300);
    return;
  }
  const std::string rest = line.substr(tag.size());
  if (rest == "ready")
    run->ready = true;
  else if (rest == "ok")
    run->verdicts.emplace_back();
  else if (rest.compare(0, 6, "error ") == 0)
    run->verdicts.push_back(rest.substr(6));
  else
    run->other = line.substr(0, 300);
}

// The environment with `extra` ("K=V") set.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    bool replaced = false;
    for (const std::string& x : extra) {
      const size_t key = x.find('=');  // "K=": the key with its '='
      replaced |= key != std::string::npos && kv.compare(0, key + 1, x, 0, key + 1) == 0;
    }
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(&s[0]);
  out.push_back(nullptr);
  return out;
}

// Starts the checker on `files` with its stdout and stderr on `out_fd`, no
// other file of this process open, in a process group of its own (a terminal's ^C is the command's to
// handle), every signal at its default (a crash ends it), none blocked.
pid_t SpawnChecker(const H5Checker& checker, H5CheckKind kind, const std::vector<std::string>& files,
                   int out_fd) {
  std::vector<std::string> args = {"zf-check-h5"};
  args.insert(args.end(), checker.argv.begin() + 1, checker.argv.end());
  args.push_back(KindName(kind));
  args.insert(args.end(), files.begin(), files.end());
  std::vector<std::string> env = EnvironmentWith(checker.env);
  std::vector<char*> argv = Pointers(args), envp = Pointers(env);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // none of the command's files (shm, locks)
#endif
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, checker.argv[0].c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw Error(ErrnoMessage("cannot start the HDF5 checker " + checker.argv[0], rc));
  return pid;
}

// Runs one checker on `files` and collects what it said, until it exits.
CheckerRun RunChecker(const H5Checker& checker, H5CheckKind kind, const std::vector<std::string>& files) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(ErrnoMessage("pipe", errno));
  pid_t pid = -1;
  try {
    pid = SpawnChecker(checker, kind, files, fds[1]);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  CheckerRun run;
  std::string pending;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    pending.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1))
      ParseLine(pending.substr(0, nl), &run);
    if (pending.size() > 65536) pending.erase(0, pending.size() - 4096);  // a flood without newlines
  }
  ParseLine(pending, &run);
  ::close(fds[0]);
  while (::waitpid(pid, &run.status, 0) < 0)
    if (errno != EINTR) throw Error(ErrnoMessage("waitpid (the HDF5 checker)", errno));
  return run;
}

}  // namespace

void SetH5Checker(std::function<H5Checker()> checker) { Checker() = std::move(checker); }
bool H5CheckerSet() { return static_cast<bool>(Checker()); }

std::vector<std::string> CheckH5Files(H5CheckKind kind, const std::vector<std::string>& paths) {
  std::vector<std::string> verdicts(paths.size());
  if (!H5CheckerSet() || paths.empty()) return verdicts;
  const H5Checker checker = Checker()();
  if (checker.argv.empty()) throw Error("the HDF5 checker has no binary (internal)");
  for (size_t next = 0; next < paths.size();) {
    const size_t end = std::min(paths.size(), next + kFilesPerChecker);
    const CheckerRun run = RunChecker(checker, kind, {paths.begin() + next, paths.begin() + end});
    const std::string what = DescribeStatus(run.status);
    if (!run.ready || run.verdicts.size() > end - next || StoppedFromOutside(run.status))
      throw Error("the HDF5 checker " + checker.argv[0] + " failed (" + what +
                  (run.other.empty() ? "" : ": " + run.other) + ")");
    for (const std::string& v : run.verdicts) verdicts[next++] = v;
    if (next < end) {  // the checker died reading paths[next]
      verdicts[next] = paths[next] + kCrashed + what + "); a damaged or hostile file";
      ++next;
    }
  }
  return verdicts;
}

bool VerdictIsCrash(const std::string& path, const std::string& verdict) {
  return verdict.compare(0, path.size(), path) == 0 &&
         verdict.compare(path.size(), strlen(kCrashed), kCrashed) == 0;
}

std::string SetAside(const std::string& path) {
  for (int n = 1; n < 100; ++n) {
    const std::string to = path + ".refused" + (n == 1 ? "" : "." + std::to_string(n));
    // renameat2's RENAME_NOREPLACE: never over a file; link + unlink where the filesystem lacks it.
    if (::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return to;
    int err = errno;
    if (err == EINVAL || err == ENOSYS) {
      if (::link(path.c_str(), to.c_str()) == 0) {
        ::unlink(path.c_str());
        return to;
      }
      err = errno;
    }
    if (err != EEXIST) throw Error(ErrnoMessage("cannot set " + path + " aside as " + to, err));
  }
  throw Error("cannot set " + path + " aside: " + path + ".refused to .refused.99 are all taken");
}

std::vector<std::string> CheckOwnFiles(H5CheckKind kind, const std::vector<std::string>& paths) {
  std::vector<std::string> verdicts = CheckH5Files(kind, paths);
  for (size_t i = 0; i < paths.size(); ++i)
    if (VerdictIsCrash(paths[i], verdicts[i])) verdicts[i] += "; kept as " + SetAside(paths[i]);
  return verdicts;
}

const std::string& H5CheckAhead::Verdict(size_t i) {
  if (i >= paths_.size()) throw Error("H5CheckAhead: no file " + std::to_string(i) + " (internal)");
  if (i >= verdicts_.size()) {
    const size_t end = std::min(paths_.size(), i + ahead_);
    const std::vector<std::string> more =
        CheckH5Files(kind_, {paths_.begin() + static_cast<std::ptrdiff_t>(verdicts_.size()),
                             paths_.begin() + static_cast<std::ptrdiff_t>(end)});
    verdicts_.insert(verdicts_.end(), more.begin(), more.end());
  }
  return verdicts_[i];
}

int RunH5Check(int argc, const char* const* argv) {
  if (argc < 2) throw ConfigError(std::string(kCheckH5Command) + " KIND FILE... (internal)");
  const H5CheckKind kind = KindOf(argv[1]);
  LimitAddressSpace();
  WriteLine("ready");
  for (int i = 2; i < argc; ++i) {
    LimitCpuFromNow(kCpuSecondsPerFile);
    std::string error;
    try {
      ReadAsCommandWould(kind, argv[i]);
    } catch (const Error& e) {
      error = e.what();
    } catch (const std::exception& e) {  // std::bad_alloc, under the address-space limit
      error = std::string(argv[i]) + ": refused: reading it failed (" + e.what() + ")";
    }
    WriteLine(error.empty() ? "ok" : "error " + error);
  }
  _exit(0);
}

}  // namespace zerofarm::io
