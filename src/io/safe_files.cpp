// Files and directories of a run, never followed through a link
// (include/zerofarm/io/safe_files.h).
#include "zerofarm/io/safe_files.h"

#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "fs_internal.h"
#include "zerofarm/core/error.h"

namespace zerofarm::io {

namespace {

void CloseKeepingErrno(int fd) {
  const int err = errno;
  ::close(fd);
  errno = err;
}

void WriteAll(int fd, const std::string& path, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) internal::ThrowErrno(path + ": write", n < 0 ? errno : EIO);
    p += n;
    left -= static_cast<size_t>(n);
  }
}

bool TrustedOwner(uid_t uid) { return uid == ::geteuid() || uid == 0; }

// The path the open descriptor `fd` names, every link resolved ("" if unknown).
std::string RealPathOf(int fd) {
  char buf[4096];
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(proc.c_str(), buf, sizeof buf - 1);
  return n > 0 && buf[0] == '/' ? std::string(buf, static_cast<size_t>(n)) : "";
}

// The directory that holds `path` (a file's path; "." for a bare name).
std::string ParentOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// Whether group write on `st` lets in no one but its owner: the group is
// root's (gid 0) or the owner's private group (named as the owner, with no
// other members). A umask of 002 leaves a user's files so, and root's git or
// tar extracts files 0664 in groups of gid 0.
bool PrivateGroup(const struct stat& st) {
  if (st.st_gid == 0) return true;
  const struct passwd* user = ::getpwuid(st.st_uid);
  const struct group* group = ::getgrgid(st.st_gid);
  if (user == nullptr || group == nullptr) return false;
  const bool members = group->gr_mem != nullptr && group->gr_mem[0] != nullptr;
  return !members && std::string(user->pw_name) == group->gr_name;
}

// Who besides its owner may write what `st` describes: "others", "its
// group", or nullptr when no one may.
const char* OtherWriters(const struct stat& st) {
  if ((st.st_mode & S_IWOTH) != 0) return "others";
  if ((st.st_mode & S_IWGRP) != 0 && !PrivateGroup(st)) return "its group";
  return nullptr;
}

// Why `dir` or a directory above it lets someone else replace what it holds,
// "" when none does: the first one, from `dir` (links resolved) up to /,
// writable by group or others without the sticky bit (/tmp, 1777, is fine:
// only a file's owner may rename or remove it there).
std::string OpenDirectoryFrom(const std::string& dir) {
  char* resolved = ::realpath(dir.c_str(), nullptr);
  if (resolved == nullptr) return ErrnoMessage(dir, errno);
  std::string at = resolved;
  std::free(resolved);
  for (;; at = ParentOf(at)) {
    struct stat st;
    if (::stat(at.c_str(), &st) != 0) return ErrnoMessage(at, errno);
    const char* writers = OtherWriters(st);
    if (writers != nullptr && (st.st_mode & S_ISVTX) == 0)
      return "its directory " + at + " is writable by " + writers +
             " without the sticky bit, so anyone there could replace it (chmod go-w or +t " + at + ")";
    if (at == "/") return "";
  }
}

// Why the open code file `fd` (from `path`) is not safe to run, "" when it is.
// `shown` names it in the refusal: the path, and a link's target.
std::string CodeFileRefusal(int fd, const std::string& path, bool link, std::string* shown) {
  const std::string real = RealPathOf(fd);
  if (link && !real.empty()) *shown = path + " (a link to " + real + ")";
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoMessage(*shown, errno);
  if (!S_ISREG(st.st_mode)) return *shown + " is not a regular file";
  if (!TrustedOwner(st.st_uid))
    return *shown + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " +
           std::to_string(::geteuid()) + ") or root";
  if (const char* writers = OtherWriters(st))
    return *shown + " is writable by " + writers + " (chmod go-w it)";
  std::string open = OpenDirectoryFrom(real.empty() ? ParentOf(path) : ParentOf(real));
  if (open.empty() && link) open = OpenDirectoryFrom(ParentOf(path));  // the link could be swapped too
  return open.empty() ? "" : *shown + ": " + open;
}

}  // namespace

int CreateFreshFile(const std::string& path, mode_t mode) {
  // Whatever is there goes first: a planted link is removed, not followed.
  internal::RemoveQuietly(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) internal::ThrowErrno(path + ": create", errno);
  return fd;
}

std::FILE* OpenFreshStream(const std::string& path) {
  internal::RemoveQuietly(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return nullptr;
  std::FILE* f = ::fdopen(fd, "w");
  if (!f) CloseKeepingErrno(fd);
  return f;
}

int OpenRunFile(const std::string& path, int flags, mode_t mode) {
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
  if (fd < 0) return -1;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    CloseKeepingErrno(fd);
    return -1;
  }
  // A second name for the file matters only when writing: it may be a hard
  // link to someone else's file (when fs.protected_hardlinks is off).
  const bool writes = (flags & O_ACCMODE) != O_RDONLY;
  if (!S_ISREG(st.st_mode) || (writes && st.st_nlink != 1)) {
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  // Blocking again: a regular file never blocks, but later reads assume it.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

void WriteNewFile(const std::string& path, const std::string& text) {
  const int fd = CreateFreshFile(path);
  try {
    WriteAll(fd, path, text);
    if (::fsync(fd) != 0 && errno != EINVAL) internal::ThrowErrno(path + ": fsync", errno);
  } catch (...) {
    ::close(fd);
    internal::RemoveQuietly(path);
    throw;
  }
  if (::close(fd) != 0) {  // a deferred write error (NFS)
    const int err = errno;
    internal::RemoveQuietly(path);
    internal::ThrowErrno(path + ": close", err);
  }
}

std::optional<std::string> ReadRunFile(const std::string& path, size_t max_bytes) {
  const int fd = OpenRunFile(path, O_RDONLY);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    if (errno == ELOOP) throw ConfigError(path + ": a symbolic link; refusing to follow it");
    if (errno == EINVAL) throw ConfigError(path + ": not a regular file; refusing to read it");
    throw Error(ErrnoMessage(path, errno));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      CloseKeepingErrno(fd);
      throw Error(ErrnoMessage(path + ": read", errno));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      throw Error(path + ": larger than " + std::to_string(max_bytes) + " bytes; not a file of zerofarm's");
    }
  }
  ::close(fd);
  return text;
}

void MakeRunDirectory(const std::string& dir, bool allow_foreign) {
  // mkdir never follows a link at `dir` (EEXIST); the check below looks at it.
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) internal::ThrowErrno("cannot create " + dir, errno);
  CheckOwnDirectory(dir, allow_foreign);
}

void CheckOwnDirectory(const std::string& dir, bool allow_foreign) {
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) throw Error(ErrnoMessage(dir, errno));
  if (S_ISLNK(st.st_mode)) {
    // A link the user (or root) made is the user's choice; anyone else's is a trap.
    if (!TrustedOwner(st.st_uid))
      throw ConfigError(dir + " is a symbolic link owned by uid " + std::to_string(st.st_uid) +
                        "; refusing to follow it");
    if (::stat(dir.c_str(), &st) != 0) throw Error(ErrnoMessage(dir, errno));
  }
  if (!S_ISDIR(st.st_mode)) throw ConfigError(dir + " is not a directory");
  if (allow_foreign) return;
  const std::string hint = " (--allow-foreign-dir to use it anyway)";
  if (!TrustedOwner(st.st_uid))
    throw ConfigError(dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " +
                      std::to_string(::geteuid()) + "); refusing to write into it" + hint);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    throw ConfigError(dir + " is writable by " + ((st.st_mode & S_IWOTH) ? "others" : "its group") +
                      "; refusing to write into it" + hint);
}

int OpenOwnCodeFile(const std::string& path, const std::string& use) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    throw ConfigError(ErrnoMessage(path, errno));  // "no such file or directory" among others
  const bool link = S_ISLNK(st.st_mode);
  if (link && !TrustedOwner(st.st_uid))
    throw ConfigError(path + " is a symbolic link owned by uid " + std::to_string(st.st_uid) +
                      "; refusing to follow it");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw ConfigError(ErrnoMessage(path, errno));
  // The checks are on the open file: what is loaded is what was checked.
  std::string shown = path;
  const std::string refusal = CodeFileRefusal(fd, path, link, &shown);
  if (refusal.empty()) return fd;
  ::close(fd);
  throw ConfigError(refusal + "; refusing to " + use);
}

void CheckOwnCodeFile(const std::string& path, const std::string& use) {
  ::close(OpenOwnCodeFile(path, use));
}

bool RemoveTree(const std::string& path) {
  // Depth first (FTW_DEPTH) so a directory is empty when it is removed;
  // FTW_PHYS: a link is an entry to remove, not a directory to enter.
  auto remove_one = [](const char* entry, const struct stat*, int, struct FTW*) { return ::remove(entry); };
  return ::nftw(path.c_str(), remove_one, 32, FTW_DEPTH | FTW_PHYS) == 0;
}

}  // namespace zerofarm::io
