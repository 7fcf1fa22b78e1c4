#pragma once
// File-system steps of an atomic file write (private to io):
//   write PATH.tmp, fsync it, rename it to PATH, fsync the directory.
// Each throws zerofarm::Error "PATH: what: strerror" (NoSpaceError for ENOSPC
// and EDQUOT, so the caller can tell a full disk from other failures).
#include <cstddef>
#include <string>

namespace zerofarm::io::internal {

// Throws NoSpaceError for ENOSPC/EDQUOT, Error otherwise: "what: strerror(err)".
[[noreturn]] void ThrowErrno(const std::string& what, int err);
void FsyncDir(const std::string& dir);
void RenameFile(const std::string& from, const std::string& to);
// Writes `size` bytes to PATH.tmp (created 0644, truncated), fsyncs it,
// renames it to PATH and fsyncs the directory. On any failure PATH.tmp is
// removed; PATH, once renamed into place, never is (a failed directory fsync
// throws and leaves it there: success means durable). Throws as above, naming
// the file.
void WriteFileAtomically(const std::string& path, const void* data, size_t size);
// Removes `path` if it exists; never throws (used on error paths).
void RemoveQuietly(const std::string& path);
// The directory part of a path ("." for a bare file name).
std::string DirName(const std::string& path);
// Throws "PATH: strerror" unless `path` exists and is not a directory.
void RequireExists(const std::string& path);

}  // namespace zerofarm::io::internal
