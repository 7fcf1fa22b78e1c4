// main() of both binaries, `zerofarm` (no LibTorch) and zerofarm-torch (src/CMakeLists.txt):
// cli::Main hands each command to the binary that runs it (proc/roles.h).
#include "zerofarm/cli/main.h"

int main(int argc, char** argv) { return zerofarm::cli::Main(argc, argv); }
