#pragma once
// Small text files (state, config, epoch) written the same durable way as
// shards and weights: PATH.tmp, fsync, rename, fsync of the directory.
#include <string>

namespace zerofarm::io {

// Writes `text` to `path` atomically. Throws Error naming the file
// (NoSpaceError on ENOSPC/EDQUOT); PATH.tmp never outlives a failure.
void WriteTextFileAtomically(const std::string& path, const std::string& text);
// The whole file; throws Error "cannot read PATH" when it cannot be opened.
std::string ReadTextFile(const std::string& path);

}  // namespace zerofarm::io
