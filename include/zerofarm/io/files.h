#pragma once
// Small text files (state, config, epoch) written the same durable way as
// shards and weights: PATH.tmp, fsync, rename, fsync of the directory.
#include <string>
#include <vector>

namespace zerofarm::io {

// Writes `text` to `path` atomically. Throws Error naming the file
// (NoSpaceError on ENOSPC/EDQUOT); PATH.tmp never outlives a failure.
void WriteTextFileAtomically(const std::string& path, const std::string& text);
// The whole file; throws Error "cannot read PATH" when it cannot be opened.
std::string ReadTextFile(const std::string& path);

// Appends one line `row` to the CSV file `path`, creating it with the line
// `header` first. A file whose header is an older prefix of `header` (columns
// added at the end since) gets the new header; its old rows keep their fewer
// fields. Throws Error naming the file when it cannot be written, or when its
// header is not such a prefix (a different file).
void AppendCsvRow(const std::string& path, const std::string& header, const std::string& row);

// The fields of one row of such a file, as written: count(sep) + 1 of them, an
// empty field kept wherever two separators meet or the row ends in one ("a,,b,"
// -> "a", "", "b", ""); no quoting, no trimming. The one splitter of CSV rows.
std::vector<std::string> SplitFields(const std::string& row, char sep = ',');

}  // namespace zerofarm::io
