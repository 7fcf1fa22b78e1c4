#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fs_internal.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/h5.h"
#include "zerofarm/io/safe_files.h"

namespace zerofarm::io::internal {

void ThrowErrno(const std::string& what, int err) {
  if (err == ENOSPC || err == EDQUOT) throw NoSpaceError(ErrnoMessage(what, err));
  throw Error(ErrnoMessage(what, err));
}

namespace {
void FsyncPath(const std::string& path, int flags, const char* what) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) ThrowErrno(path + ": open for " + what, errno);
  int rc;
  do {
    rc = ::fsync(fd);
  } while (rc != 0 && errno == EINTR);
  const int err = errno;
  ::close(fd);
  // EINVAL: the file system does not support fsync on this kind of file.
  if (rc != 0 && err != EINVAL) ThrowErrno(path + ": " + what, err);
}
}  // namespace

void FsyncDir(const std::string& dir) { FsyncPath(dir, O_RDONLY | O_DIRECTORY, "fsync directory"); }

void RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) ThrowErrno("rename " + from + " to " + to, errno);
}

void WriteFileAtomically(const std::string& path, const void* data, size_t size) {
  const std::string tmp = path + ".tmp";
  try {
    const int fd = CreateFreshFile(tmp);  // never through a planted link (safe_files.h)
    const auto* p = static_cast<const char*>(data);
    size_t left = size;
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        ::close(fd);
        ThrowErrno(tmp + ": write", err);
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    int rc;
    do {
      rc = ::fsync(fd);
    } while (rc != 0 && errno == EINTR);
    const int err = errno;
    // close() can report a deferred write error (NFS): check it too.
    if (::close(fd) != 0 && rc == 0) ThrowErrno(tmp + ": close", errno);
    if (rc != 0 && err != EINVAL) ThrowErrno(tmp + ": fsync", err);
    RenameFile(tmp, path);
  } catch (...) {
    RemoveQuietly(tmp);
    throw;
  }
  // Once renamed, PATH is never removed here (issue #21): a reader may have
  // opened it already, and a writer's successor finds and counts it. A failed
  // directory fsync is reported; the file stays in place.
  FsyncDir(DirName(path));
}

void RemoveQuietly(const std::string& path) { ::unlink(path.c_str()); }

std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

void RequireExists(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw Error(ErrnoMessage(path, errno));
  if (S_ISDIR(st.st_mode)) throw Error(ErrnoMessage(path, EISDIR));
}

}  // namespace zerofarm::io::internal

namespace zerofarm::io {

void WriteTextFileAtomically(const std::string& path, const std::string& text) {
  internal::WriteFileAtomically(path, text.data(), text.size());
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

void AppendCsvRow(const std::string& path, const std::string& header, const std::string& row) {
  // Read and appended without following a link (safe_files.h).
  const std::optional<std::string> text = ReadRunFile(path, size_t{1} << 30);
  if (text) {
    const std::string old = text->substr(0, text->find('\n'));
    if (old != header) {
      if (header.compare(0, old.size(), old) != 0 ||
          (header.size() > old.size() && header[old.size()] != ','))
        throw Error(path + " has the columns \"" + old + "\", not a prefix of \"" + header + "\"");
      WriteTextFileAtomically(path, header + text->substr(old.size()));
    }
  } else {
    WriteTextFileAtomically(path, header + "\n");
  }
  const int fd = OpenRunFile(path, O_WRONLY | O_APPEND);
  if (fd < 0) throw Error(ErrnoMessage("cannot append to " + path, errno));
  const std::string line = row + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const int err = errno;
  ::close(fd);
  if (!ok) internal::ThrowErrno("cannot append to " + path, err);
}

std::vector<std::string> SplitFields(const std::string& row, char sep) {
  std::vector<std::string> fields;
  size_t from = 0;
  for (size_t at = row.find(sep); at != std::string::npos; at = row.find(sep, from)) {
    fields.push_back(row.substr(from, at - from));
    from = at + 1;
  }
  fields.push_back(row.substr(from));
  return fields;
}

}  // namespace zerofarm::io
