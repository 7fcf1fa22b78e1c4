// The single `zerofarm` binary: every subcommand and every process role.
#include "zerofarm/cli/main.h"

int main(int argc, char** argv) { return zerofarm::cli::Main(argc, argv); }
