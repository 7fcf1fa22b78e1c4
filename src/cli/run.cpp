// zerofarm run: parses the options into a FarmConfig and starts the farm.
#include <ctime>
#include <thread>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {
namespace {
std::string DefaultRunDir() {
  char name[64];
  const std::time_t now = std::time(nullptr);
  std::tm tm;
  localtime_r(&now, &tm);
  std::strftime(name, sizeof name, "runs/run-%Y%m%d-%H%M%S", &tm);
  return name;
}
}  // namespace

int RunCommand(int argc, char** argv) {
  cxxopts::Options options(
      "zerofarm run",
      "Self-play farm: P worker processes, G evaluators (GPUs, or E CPU evaluator processes) and a "
      "writer of HDF5 shards, over shared memory.");
  AddTableOptions(options, proc::kRun);
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;

  proc::FarmConfig c = ReadTableOptions(r, proc::kRun);
  if (r.count("out") && r["out"].as<std::string>().empty())  // not the default run directory by accident
    throw ConfigError("--out \"\" names no directory; give a run directory or leave --out out");
  if (c.out.empty()) c.out = DefaultRunDir();
  c.Validate();
  c.ResolveResources();
  return proc::RunFarm(c);
}

}  // namespace zerofarm::cli
