// Fuzz target: the option parser of every command that takes the option
// table (src/cli/options.cpp: AddTableOptions, ParseArgs, ReadTableOptions,
// then CheckTableOptions and, for `run`, FarmConfig::Validate), as `zerofarm
// COMMAND ARGS...` runs them before it starts anything. The first byte picks
// the command; the rest, split at NUL and newline bytes, is argv. Bad
// arguments must end in a ConfigError or a cxxopts exception (both exit 2
// with one line, cli/main.cpp), never in another exception or a crash.
// `--config` is left out: its file is the config target's (config_fuzz.cpp),
// and here it could name any path of the machine (a FIFO would block).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands.h"
#include "fuzz_input.h"
#include "zerofarm/core/error.h"
#include "zerofarm/proc/options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace zf = zerofarm;
  if (size < 1 || size > 4096) return -1;
  static const zf::proc::OptionCommand kCommands[] = {zf::proc::kRun,   zf::proc::kSelfplay, zf::proc::kTune,
                                                      zf::proc::kLoop,  zf::proc::kBench,    zf::proc::kEval,
                                                      zf::proc::kTrain, zf::proc::kGtp};
  const auto command = kCommands[data[0] % (sizeof kCommands / sizeof kCommands[0])];
  std::vector<std::string> words{"zerofarm-command"};
  if (size > 1) words.emplace_back();
  for (size_t i = 1; i < size; ++i) {
    if (data[i] == 0 || data[i] == '\n')
      words.emplace_back();
    else
      words.back() += static_cast<char>(data[i]);
  }
  for (const auto& w : words)  // see the top; and --help only prints the help
    if (w.rfind("--config", 0) == 0 || w.rfind("--help", 0) == 0 || w.rfind("-h", 0) == 0) return -1;
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  try {
    cxxopts::Options options("zerofarm-command", "fuzzed");
    zf::cli::AddTableOptions(options, command);
    cxxopts::ParseResult r;
    int code = 0;
    if (!zf::cli::ParseArgs(options, static_cast<int>(words.size()), argv.data(), &r, &code)) return 0;
    const zf::proc::FarmConfig c = zf::cli::ReadTableOptions(r, command);
    zf::cli::CheckTableOptions(c, command);
    if (command == zf::proc::kRun) c.Validate();
  } catch (const zf::ConfigError& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) std::abort();
  } catch (const cxxopts::exceptions::exception&) {
  }
  return 0;
}
