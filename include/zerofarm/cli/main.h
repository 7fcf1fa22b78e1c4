#pragma once
// The `zerofarm` command: the subcommands `zerofarm --help` lists (run,
// selfplay, inspect, train, loop, eval, bench, tune, export, gtp, config,
// version) and the internal evaluator role the supervisor execs
// (proc/evaluator_command.h). Returns the process exit code
// (see core/exit_codes.h): bad command-line values print one line on stderr
// and return 2.
namespace zerofarm::cli {
int Main(int argc, char** argv);
}  // namespace zerofarm::cli
