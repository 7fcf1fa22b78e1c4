// zerofarm config: the option table as a file. `--example` prints every key
// with its help and default (docs/config-example.conf is this output);
// `--show FILE` prints the effective config a --config FILE gives.
#include <iostream>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/proc/options.h"

namespace zerofarm::cli {

int ConfigCommand(int argc, char** argv) {
  cxxopts::Options options("zerofarm config",
                           "Config files: every option of the option table as a `key = value` line.");
  options.add_options("config")(
      "example", "Print an example config: every key, its help and its default (docs/config-example.conf)")(
      "show", "Print the effective config that --config FILE gives (the defaults for the keys it leaves out)",
      cxxopts::value<std::string>());
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  if (r.count("example")) {
    std::cout << proc::ExampleConfig();
    return kExitOk;
  }
  if (r.count("show")) {
    std::cout << proc::FarmConfig::FromFile(r["show"].as<std::string>()).ToText();
    return kExitOk;
  }
  throw ConfigError("give --example or --show FILE");
}

}  // namespace zerofarm::cli
