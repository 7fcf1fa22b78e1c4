#pragma once
// The `zerofarm` command: subcommands run, selfplay, inspect, version, and the
// internal evaluator role the supervisor execs. Returns the process exit code
// (see core/exit_codes.h): bad command-line values print one line on stderr
// and return 2.
namespace zerofarm::cli {
int Main(int argc, char** argv);
}  // namespace zerofarm::cli
