// MakeRunDirectories (run_dir.h).
#include "run_dir.h"

#include <filesystem>

#include "zerofarm/core/error.h"
#include "zerofarm/io/safe_files.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::proc {

void MakeRunDirectories(const FarmConfig& config) {
  const bool foreign = config.allow_foreign_dir;
  const std::filesystem::path out(config.out);
  std::error_code ec;
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path(), ec);
  if (ec) throw Error("cannot create the host directory " + ShardDir(config) + ": " + ec.message());
  try {
    // Top down, each checked before anything is made inside it.
    io::MakeRunDirectory(config.out, foreign);
    io::MakeRunDirectory(config.out + "/shards", foreign);
    io::MakeRunDirectory(ShardDir(config), foreign);
    io::MakeRunDirectory(config.out + "/host-index", foreign);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    throw Error("cannot create the host directory " + ShardDir(config) + ": " + e.what());
  }
  if (config.models.empty()) {
    io::MakeRunDirectory(config.out + "/models", foreign);
  } else {  // --models DIR: the user's own path, made as asked, then checked
    std::filesystem::create_directories(config.models, ec);
    if (ec) throw Error("cannot create the models directory " + config.models + ": " + ec.message());
    io::CheckOwnDirectory(config.models, foreign);
  }
}

}  // namespace zerofarm::proc
