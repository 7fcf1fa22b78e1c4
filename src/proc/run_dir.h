#pragma once
// The directories of a run, made and checked before anything is written into
// them (issue 21, point 1; io/safe_files.h): OUT, OUT/shards, the host
// directory OUT/shards/HOST, OUT/host-index and the models directory.
#include "zerofarm/proc/farm_config.h"

namespace zerofarm::proc {

// Creates the run's directories (mode 0755) and checks each with
// io::CheckOwnDirectory(dir, config.allow_foreign_dir): ConfigError (one line,
// exit 2) for a directory that another user owns or that group or others can
// write, or a link to one that another user planted; Error when one cannot
// be created. The parents of OUT are the user's own path: made as asked.
void MakeRunDirectories(const FarmConfig& config);

}  // namespace zerofarm::proc
