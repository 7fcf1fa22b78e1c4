// io::RunDir (run_dir.h): the paths of a run directory, and the supervisor's
// steps that make, lock and claim it.
#include "zerofarm/io/run_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "zerofarm/core/error.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/h5.h"
#include "zerofarm/io/safe_files.h"

namespace zerofarm::io {

RunDir::RunDir(std::string out, std::string host_id, std::string models)
    : out_(std::move(out)), host_id_(std::move(host_id)), models_(std::move(models)) {}

std::string RunDir::ShardsDir() const { return out_ + "/shards"; }
std::string RunDir::HostDir() const { return ShardsDir() + "/" + host_id_; }
std::string RunDir::RejectedDir() const { return out_ + "/rejected"; }
std::string RunDir::RejectedGame(uint64_t game_id) const {
  char name[40];
  std::snprintf(name, sizeof name, "/game-0x%016llx", static_cast<unsigned long long>(game_id));
  return RejectedDir() + name;
}
std::string RunDir::ConfigFile() const { return HostDir() + "/config.txt"; }
std::string RunDir::EpochFile() const { return HostDir() + "/epoch"; }
std::string RunDir::LockFile() const { return HostDir() + "/.zerofarm.lock"; }
std::string RunDir::MetricsCsv() const { return HostDir() + "/metrics.csv"; }
std::string RunDir::RotatedMetricsCsv(uint32_t epoch) const {
  return HostDir() + "/metrics-" + std::to_string(epoch) + ".csv";
}
std::string RunDir::MetricsProm() const { return HostDir() + "/metrics.prom"; }
std::string RunDir::SummaryText() const { return HostDir() + "/summary.txt"; }
std::string RunDir::SummaryJson() const { return HostDir() + "/summary.json"; }
std::string RunDir::RunIdFile() const { return out_ + "/run_id"; }
std::string RunDir::HostIndexDir() const { return out_ + "/host-index"; }
std::string RunDir::HostIndexClaim(uint32_t index) const {
  return HostIndexDir() + "/" + std::to_string(index);
}
std::string RunDir::ModelsDir() const { return models_.empty() ? out_ + "/models" : models_; }
std::string RunDir::ModelPath(uint32_t version) const { return ModelsDir() + "/" + ModelFileName(version); }
std::string RunDir::TrainDir() const { return out_ + "/train"; }
std::string RunDir::TrainStateFile() const { return TrainDir() + "/state.txt"; }
std::string RunDir::TrainMomentumFile() const { return TrainDir() + "/momentum.h5"; }
std::string RunDir::TrainHeadsFile() const { return TrainDir() + "/heads.h5"; }
std::string RunDir::EvalDir() const { return out_ + "/eval"; }
std::string RunDir::EvalCsv() const { return EvalDir() + "/eval.csv"; }
std::string RunDir::CurveCsv() const { return EvalDir() + "/curve.csv"; }
std::string RunDir::LoopFarmConfig() const { return EvalDir() + "/farm-config.txt"; }
std::string RunDir::LoopLockFile() const { return EvalDir() + "/.loop.lock"; }
std::string RunDir::LoopSecondsFile() const { return EvalDir() + "/loop-seconds.txt"; }
std::string RunDir::LoopCpuSecondsFile() const { return EvalDir() + "/loop-cpu-seconds.txt"; }
std::string RunDir::LoopRecipeCopy() const { return EvalDir() + "/recipe.txt"; }
std::string RunDir::LoopStagesCsv() const { return EvalDir() + "/stages.csv"; }
std::string RunDir::CheckpointMean() const { return EvalDir() + "/checkpoint-mean.h5"; }
std::string RunDir::CheckpointMeanCsv() const { return EvalDir() + "/mean.csv"; }
std::string RunDir::RatedFile(const std::string& set_name) const {
  return EvalDir() + "/" + set_name + ".rated";
}

std::string RunDir::ModelFileName(uint64_t version) { return "model-" + std::to_string(version) + ".h5"; }

int64_t RunDir::ModelNumber(const std::string& name) {
  const std::string prefix = "model-";
  const std::string suffix = name.size() > 3 && name.compare(name.size() - 3, 3, ".pt") == 0 ? ".pt" : ".h5";
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 15) return -1;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  return std::stoll(digits);
}

void RunDir::CheckModelFileVersion(const std::string& path, uint32_t recorded) {
  const std::string name = std::filesystem::path(path).filename().string();
  const int64_t n = ModelNumber(name);
  if (n < 0 || n == static_cast<int64_t>(recorded)) return;
  const bool pt = name.size() > 3 && name.compare(name.size() - 3, 3, ".pt") == 0;
  throw ConfigError(path + ": its name says model version " + std::to_string(n) + " but it records " +
                    std::to_string(recorded) + (pt ? " (zerofarm.json)" : " (its version attribute)") +
                    "; a model-N file must record version N (docs/models.md, Hot reload)");
}

namespace {

// The version of a directory entry named model-N.h5 or model-N.pt that is a regular file
// itself (a link, even to a model, is never followed: only the run writes its
// models directory, and nothing planted there is read), else -1.
int64_t ModelFileVersion(const std::filesystem::directory_entry& e) {
  const int64_t v = RunDir::ModelNumber(e.path().filename().string());
  std::error_code ec;
  return v >= 0 && e.symlink_status(ec).type() == std::filesystem::file_type::regular ? v : -1;
}

}  // namespace

std::pair<int64_t, std::string> RunDir::NewestModelIn(const std::string& dir) {
  std::pair<int64_t, std::string> best{-1, ""};
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const int64_t n = ModelFileVersion(e);
    if (n > best.first) best = {n, e.path().string()};
  }
  return best;
}

std::vector<std::pair<int64_t, std::string>> RunDir::NewestModelsIn(const std::string& dir, size_t n) {
  std::vector<std::pair<int64_t, std::string>> models;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const int64_t v = ModelFileVersion(e);
    if (v >= 0) models.emplace_back(v, e.path().string());
  }
  std::sort(models.begin(), models.end());
  if (models.size() > n) models.erase(models.begin(), models.end() - static_cast<std::ptrdiff_t>(n));
  return models;
}

std::string RunDir::ShardsRootOf(const std::string& path) {
  std::error_code ec;
  // A run directory: only its shards (RUN/models holds weights files, also *.h5).
  return std::filesystem::is_directory(path + "/shards", ec) ? path + "/shards" : path;
}

std::string RunDir::RunIdAbove(const std::string& path, std::string* where) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(path)) return "";
  fs::path dir = fs::absolute(path).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // "RUN/" -> "RUN"
  for (int up = 0; up < 3 && !dir.empty(); ++up, dir = dir.parent_path()) {
    std::ifstream in(dir / "run_id");
    std::string id;
    if (in >> id) {
      *where = (dir / "run_id").string();
      return id;
    }
  }
  return "";
}

void RunDir::MakeDirectories(bool foreign) const {
  const std::filesystem::path out(out_);
  std::error_code ec;
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path(), ec);
  if (ec) throw Error("cannot create the host directory " + HostDir() + ": " + ec.message());
  try {
    // Top down, each checked before anything is made inside it.
    MakeRunDirectory(out_, foreign);
    MakeRunDirectory(ShardsDir(), foreign);
    MakeRunDirectory(HostDir(), foreign);
    MakeRunDirectory(HostIndexDir(), foreign);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    throw Error("cannot create the host directory " + HostDir() + ": " + e.what());
  }
  if (models_.empty()) {
    MakeRunDirectory(ModelsDir(), foreign);
  } else {  // --models DIR: the user's own path, made as asked, then checked
    std::filesystem::create_directories(models_, ec);
    if (ec) throw Error("cannot create the models directory " + models_ + ": " + ec.message());
    CheckOwnDirectory(models_, foreign);
  }
}

RunDir::HostLock::~HostLock() {
  if (fd_ >= 0) close(fd_);
}

namespace {

// An exclusive flock on `path` (made if missing, never through a link), with
// this process's pid written in it; ConfigError "another zerofarm run (pid
// P) <busy>" when a live process holds it.
int LockExclusively(const std::string& path, const std::string& busy) {
  const int fd = OpenRunFile(path, O_RDWR | O_CREAT);  // issue 21: never through a planted link
  if (fd < 0 && (errno == ELOOP || errno == EINVAL))
    throw ConfigError(path + " is a link or not a regular file; refusing to use it");
  if (fd < 0) throw Error(ErrnoMessage("cannot open " + path, errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {0};
    ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
    (void)n;
    close(fd);
    throw ConfigError("another zerofarm run (pid " + std::string(pid) + ") " + busy);
  }
  // The pid is only a hint for the message above: a failed write is harmless.
  const std::string me = std::to_string(getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, me.data(), me.size(), 0) < 0) {
  }
  return fd;
}

}  // namespace

RunDir::HostLock RunDir::LockHostDir() const {
  return HostLock(
      LockExclusively(LockFile(), "is writing into " + HostDir() + " (two hosts with one --host-id?)"));
}

RunDir::HostLock RunDir::LockLoop() const {
  return HostLock(LockExclusively(
      LoopLockFile(), "is a zerofarm loop of " + out_ + " (one still stopping? wait for it to exit)"));
}

std::string RunDir::ReadOrMakeRunId(uint64_t random) const {
  const std::string path = RunIdFile();
  for (int attempt = 0; attempt < 50; ++attempt) {
    const std::optional<std::string> text = ReadRunFile(path);  // issue 21: no link followed
    std::istringstream in(text.value_or(""));
    std::string id;
    if (in >> id && !id.empty()) return id;
    if (text) {  // being written by nobody: link() makes it whole; an empty one is damage
      if (attempt > 0) throw ConfigError(path + " is empty: remove it or use a new run directory");
    } else {
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(random));
      // The host id names the temporary file (pids alone may repeat across hosts).
      const std::string tmp = path + "." + host_id_ + "." + std::to_string(getpid()) + ".tmp";
      WriteNewFile(tmp, std::string(hex) + "\n");  // issue 21: fresh file; removed on failure
      const int rc = link(tmp.c_str(), path.c_str());
      const int err = errno;
      std::remove(tmp.c_str());
      if (rc == 0) return hex;
      if (err != EEXIST) throw Error(ErrnoMessage("cannot create " + path, err));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw Error("cannot read " + path);
}

void RunDir::ClaimHostIndex(uint32_t index) const {
  const std::string claims = HostIndexDir();
  std::error_code ec;
  std::filesystem::create_directories(claims, ec);
  if (ec) throw Error("cannot create " + claims + ": " + ec.message());
  const std::string path = HostIndexClaim(index);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0) {
    const std::string text = host_id_ + "\n";
    const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int err = errno;
    close(fd);
    if (!ok) {
      std::remove(path.c_str());
      if (err == ENOSPC || err == EDQUOT) throw NoSpaceError(ErrnoMessage("cannot write " + path, err));
      throw Error("cannot write " + path);
    }
    return;
  }
  if (errno != EEXIST) throw Error(ErrnoMessage("cannot create " + path, errno));
  std::string owner;
  for (int attempt = 0; attempt < 50 && owner.empty(); ++attempt) {  // its creator may be mid-write
    std::istringstream in(ReadRunFile(path).value_or(""));           // issue 21: no link followed
    in >> owner;
    if (owner.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (owner != host_id_)
    throw ConfigError("host index " + std::to_string(index) + " of --host-id " + host_id_ +
                      " is taken by host '" + owner + "' of this run (" + path +
                      "); give this host another --host-id (a number below "
                      "65536 is used as the index itself)");
}

uint32_t RunDir::NextEpoch(uint32_t max_epochs) const {
  const std::string dir = HostDir();
  uint32_t epoch = 0;
  std::istringstream in(ReadRunFile(EpochFile()).value_or(""));  // issue 21: no link followed
  if (in >> epoch) ++epoch;
  if (epoch >= max_epochs)
    throw Error(dir + ": more than " + std::to_string(max_epochs - 1) + " runs of this host wrote into it");
  WriteTextFileAtomically(EpochFile(), std::to_string(epoch) + "\n");
  return epoch;
}

}  // namespace zerofarm::io
