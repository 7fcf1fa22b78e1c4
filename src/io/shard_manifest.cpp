// A host directory's shard manifest (io/shard_manifest.h): append after a
// durable rename, repair at a writer's start, follow by offset.
#include "zerofarm/io/shard_manifest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>
#include <utility>

#include "fs_internal.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/log.h"
#include "zerofarm/io/h5_check.h"
#include "zerofarm/io/safe_files.h"
#include "zerofarm/io/shard.h"

namespace zerofarm::io {
namespace {

using internal::ThrowErrno;

std::string ManifestPath(const std::string& dir) { return dir + "/" + kShardManifestName; }

// A manifest line's longest form: a name of at most 64 bytes and two numbers.
constexpr size_t kMaxLine = 128;

bool IsDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// The index N of "PREFIX-N.h5", or -1.
int64_t ShardIndexOf(const std::string& name, const std::string& prefix) {
  const std::string head = prefix + "-";
  if (name.size() <= head.size() + 3 || name.compare(0, head.size(), head) != 0) return -1;
  if (name.compare(name.size() - 3, 3, ".h5") != 0) return -1;
  const std::string digits = name.substr(head.size(), name.size() - head.size() - 3);
  if (!IsDigits(digits) || digits.size() > 15) return -1;
  return std::stoll(digits);
}

// The manifest opened as a file of the run (io::OpenRunFile: no link
// followed, a regular file, one name when written); -1 when it is absent.
// ConfigError for a planted link, directory, FIFO or hard link: a writer
// restarted on it would only fail again (issue 76).
int OpenManifest(const std::string& path, int flags) {
  const int fd = OpenRunFile(path, flags);
  if (fd >= 0 || errno == ENOENT) return fd;
  if (errno == ELOOP || errno == EINVAL || errno == EISDIR || errno == ENXIO)
    throw ConfigError(path + " is a link or not a regular file; refusing to use it (remove it: the " +
                      "writer lists the shards again)");
  ThrowErrno(path, errno);
}

// Reads the manifest from byte `from`. Empty if absent.
std::string ReadManifest(const std::string& path, uint64_t from) {
  const int fd = OpenManifest(path, O_RDONLY);
  if (fd < 0) return "";
  std::string out;
  char buf[65536];
  off_t at = static_cast<off_t>(from);
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof(buf), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ThrowErrno(path + ": read", err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    at += n;
  }
  ::close(fd);
  return out;
}

void WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ThrowErrno(path + ": write", errno);
    done += static_cast<size_t>(n);
  }
}

void Fsync(int fd, const std::string& path) {
  int rc;
  do {
    rc = ::fsync(fd);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno != EINVAL) ThrowErrno(path + ": fsync", errno);
}

}  // namespace

bool ParseManifestLine(const std::string& line, ManifestEntry* entry) {
  if (line.size() > kMaxLine) return false;
  const size_t a = line.find(' ');
  const size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
  if (b == std::string::npos || line.find(' ', b + 1) != std::string::npos) return false;
  const std::string name = line.substr(0, a), positions = line.substr(a + 1, b - a - 1),
                    games = line.substr(b + 1);
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') return false;
  if (!IsDigits(positions) || !IsDigits(games) || positions.size() > 18 || games.size() > 18) return false;
  entry->name = name;
  entry->positions = std::stoull(positions);
  entry->games = std::stoull(games);
  return true;
}

void AppendShardManifest(const std::string& dir, const ManifestEntry& entry) {
  const std::string path = ManifestPath(dir);
  const std::string line =
      entry.name + " " + std::to_string(entry.positions) + " " + std::to_string(entry.games) + "\n";
  ManifestEntry check;
  if (!ParseManifestLine(line.substr(0, line.size() - 1), &check))
    throw Error(path + ": not a manifest entry: " + entry.name);
  struct stat st {};
  const bool existed = ::lstat(path.c_str(), &st) == 0;
  const int fd = OpenManifest(path, O_WRONLY | O_APPEND | O_CREAT);
  try {
    WriteAll(fd, line, path);  // one write: a kill tears at most this line
    Fsync(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) ThrowErrno(path + ": close", errno);
  if (!existed) internal::FsyncDir(dir);
}

uint64_t RepairShardManifest(const std::string& dir, const std::string& prefix) {
  const std::string path = ManifestPath(dir);
  const std::string text = ReadManifest(path, 0);
  const size_t keep = text.empty() || text.back() == '\n' ? text.size() : text.rfind('\n') + 1;
  if (keep < text.size()) {  // rfind's npos + 1 == 0: a torn only line
    ZF_LOG(WARN) << path << ": removing a torn last line (" << text.size() - keep << " bytes)";
    if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0) ThrowErrno(path + ": truncate", errno);
  }
  int64_t last = -1;
  size_t at = 0, line_no = 0;
  while (at < keep) {
    const size_t end = text.find('\n', at);
    ManifestEntry e;
    ++line_no;
    if (!ParseManifestLine(text.substr(at, end - at), &e))
      throw Error(path + ": line " + std::to_string(line_no) + " is not a manifest entry");
    last = std::max(last, ShardIndexOf(e.name, prefix));
    at = end + 1;
  }
  std::map<int64_t, std::string> missing;  // renamed after the last listed one
  for (const std::string& shard : ListShards(dir)) {
    const std::string name = shard.substr(shard.find_last_of('/') + 1);
    const int64_t index = ShardIndexOf(name, prefix);
    if (index > last) missing.emplace(index, shard);
  }
  std::vector<std::string> shards;  // by index
  for (const auto& entry : missing) shards.push_back(entry.second);
  // Written by another process: read first by the checker (io/h5_check.h), and one
  // that crashes it set aside, so that it cannot stop every writer start.
  const std::vector<std::string> verdicts = CheckOwnFiles(H5CheckKind::kShardMeta, shards);
  uint64_t added = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string& shard = shards[i];
    ManifestEntry entry{shard.substr(shard.find_last_of('/') + 1), 0, 0};
    try {
      if (!verdicts[i].empty()) throw Error(verdicts[i]);
      const ShardReader reader(shard);  // a renamed shard is complete
      entry.positions = reader.Positions();
      entry.games = reader.Games();
    } catch (const NoSpaceError&) {
      throw;
    } catch (const Error& e) {  // not a shard of ours (put there by hand): never listed
      ZF_LOG(WARN) << "not listing " << shard << " in " << path << ": " << e.what();
      continue;
    }
    AppendShardManifest(dir, entry);
    ++added;
  }
  if (added > 0) ZF_LOG(INFO) << path << ": listed " << added << " shard(s) renamed before it was written";
  return added;
}

void CheckShardManifest(const std::string& dir) {
  const int fd = OpenManifest(ManifestPath(dir), O_WRONLY | O_APPEND);
  if (fd >= 0) ::close(fd);
}

ShardManifestReader::ShardManifestReader(std::string dir) : path_(ManifestPath(dir)) {}

bool ShardManifestReader::Present() const {
  struct stat st {};
  return ::lstat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<ManifestEntry> ShardManifestReader::ReadNew() {
  const std::string text = ReadManifest(path_, offset_);
  std::vector<ManifestEntry> out;
  size_t at = 0;
  for (size_t end; (end = text.find('\n', at)) != std::string::npos; at = end + 1) {
    ManifestEntry e;
    ++line_;
    if (!ParseManifestLine(text.substr(at, end - at), &e))
      throw Error(path_ + ": line " + std::to_string(line_) + " is not a manifest entry");
    out.push_back(std::move(e));
  }
  offset_ += at;  // a torn tail stays unread
  return out;
}

RunShardFollower::RunShardFollower(std::string shards_dir) : shards_dir_(std::move(shards_dir)) {}

std::vector<std::string> RunShardFollower::NewShards() {
  std::vector<std::string> out;
  manifest_hosts_ = listed_hosts_ = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(shards_dir_, ec)) {
    const std::string path = e.path().string(), name = e.path().filename().string();
    std::error_code type_ec;
    if (e.is_directory(type_ec) && !e.is_symlink(type_ec)) {
      FromHost(path, hosts_.try_emplace(path, path).first->second, &out);
    } else if (name.size() > 3 && name.compare(name.size() - 3, 3, ".h5") == 0 && name[0] != '.' &&
               e.is_regular_file(type_ec) && top_.insert(name).second) {
      out.push_back(path);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void RunShardFollower::FromHost(const std::string& dir, Host& host, std::vector<std::string>* out) {
  std::vector<std::string> names;
  bool from_manifest = !host.broken && host.reader.Present();
  if (from_manifest) {
    try {
      for (const ManifestEntry& e : host.reader.ReadNew()) names.push_back(e.name);
    } catch (const Error& e) {  // damaged: this host is listed from now on
      ZF_LOG(WARN) << e.what() << "; listing " << dir << " instead";
      host.broken = true;
      from_manifest = false;
      names.clear();
    }
  }
  if (from_manifest) {
    ++manifest_hosts_;
  } else {
    ++listed_hosts_;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      std::error_code type_ec;
      if (name.size() > 3 && name.compare(name.size() - 3, 3, ".h5") == 0 && name[0] != '.' &&
          e.is_regular_file(type_ec))
        names.push_back(name);
    }
  }
  for (const std::string& name : names) {
    if (!host.returned.insert(name).second) continue;
    struct stat st {};
    if (::lstat((dir + "/" + name).c_str(), &st) != 0) {  // listed, then removed by hand
      ZF_LOG(WARN) << dir << "/" << kShardManifestName << " lists " << name
                   << ", which is not there; skipped";
      continue;
    }
    out->push_back(dir + "/" + name);
  }
}

}  // namespace zerofarm::io
