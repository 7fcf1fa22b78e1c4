#pragma once
// The files and directories of a run, opened so that nobody else's link or
// file is followed or truncated (issue 21, point 1; docs/reliability.md).
//
// A farm often runs as root in a directory that others can reach (a shared
// filesystem, /tmp). Every file of the run is therefore opened with
// O_NOFOLLOW, and every file it writes is created fresh: whatever name is
// there is unlinked (an unlink removes a link, never its target), then the
// file is created with O_CREAT | O_EXCL | O_NOFOLLOW. The directories of the
// run must be the user's own (see CheckOwnDirectory), so nobody can plant a
// name between the unlink and the create.
#include <sys/types.h>

#include <cstdio>
#include <optional>
#include <string>

namespace zerofarm::io {

// Creates `path` fresh for writing, mode `mode`: unlinks what is there (a
// link, a stale file), then O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW. Returns
// the descriptor (O_CLOEXEC); the caller closes it. Throws Error "PATH:
// create: REASON" (NoSpaceError for ENOSPC/EDQUOT).
int CreateFreshFile(const std::string& path, mode_t mode = 0644);

// CreateFreshFile as a stdio stream opened for writing ("w"); nullptr with
// errno set on failure (never throws): for files whose loss is only logged.
std::FILE* OpenFreshStream(const std::string& path);

// Opens an existing file of the run, or creates it (flags as for open(2),
// O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC added), and checks that it is a regular
// file, with one link when opened for writing: a symbolic link (ELOOP), a
// FIFO, a device or (for writing) a hard link to someone else's file is
// refused. Returns the descriptor, or -1 with errno set (ELOOP for a link,
// EINVAL for a file of another kind or with several links).
int OpenRunFile(const std::string& path, int flags, mode_t mode = 0644);

// Writes `text` to a new file `path` (CreateFreshFile), fsyncs and closes it.
// On any failure the file is removed and Error (NoSpaceError on a full disk)
// names it.
void WriteNewFile(const std::string& path, const std::string& text);

// The contents of a small file of the run, read without following a link:
// nullopt when there is no such file. Throws ConfigError naming the file when
// it is a link or not a regular file (exit 2: a planted file), Error when it
// is larger than `max_bytes` or cannot be read.
std::optional<std::string> ReadRunFile(const std::string& path, size_t max_bytes = 1 << 20);

// Makes the directory `dir` (mode 0755; an existing one is fine) and checks it
// as a directory of the run (CheckOwnDirectory). Its parent must exist.
void MakeRunDirectory(const std::string& dir, bool allow_foreign);

// Throws ConfigError (one line, naming the directory and
// --allow-foreign-dir) unless `dir` is safe for this user to write into: a
// directory (not reached through a link that another user owns) owned by
// this effective user or by root, and not writable by group or others.
// With `allow_foreign` only the link check remains: the user vouches for the
// owner and the mode.
void CheckOwnDirectory(const std::string& dir, bool allow_foreign);

// Opens a file of code to run (a game plugin, a model) for reading,
// O_CLOEXEC, and returns the descriptor; the caller closes it. As for
// CheckOwnDirectory: a link is followed only when this user or root owns it;
// the file must be a regular file owned by this user or root and not writable
// by group or others (nobody else could have written the code), and no
// directory above it (its real path, every link resolved; and a link's own
// directory) may be writable by group or others without the sticky bit
// (issue 82: anyone there could swap the file). No --allow-foreign-dir.
// Throws ConfigError with one line naming `path` (and a link's target)
// otherwise, or when it is missing, ending "; refusing to USE".
int OpenOwnCodeFile(const std::string& path, const std::string& use = "run its code");
// OpenOwnCodeFile's checks alone: the file is closed again.
void CheckOwnCodeFile(const std::string& path, const std::string& use);

// Removes `path` and everything under it without following a link (a link is
// removed, never what it points to). False if anything could not be removed.
// Not std::filesystem::remove_all: a binary linking PyTorch's pip LibTorch
// binds that to libtorch_cpu.so's own copy, which crashed there.
bool RemoveTree(const std::string& path);

}  // namespace zerofarm::io
