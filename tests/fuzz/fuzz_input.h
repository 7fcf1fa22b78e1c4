#pragma once
// Helpers of the fuzz targets (tests/fuzz/*_fuzz.cpp): libFuzzer hands a
// target bytes; the readers under test take a path, so the bytes are written
// to one scratch file per target process, in $ZF_FUZZ_SCRATCH (a directory
// tools/fuzz.sh makes and removes: libFuzzer ends a timed run with _Exit, so
// no exit handler runs), else /dev/shm, else $TMPDIR or /tmp (then removed
// at a normal exit only). Not thread-safe: a libFuzzer process runs one input
// at a time.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "zerofarm/core/error.h"

namespace zerofarm::fuzz {

// The scratch file's path, holding exactly `size` bytes of `data`.
inline const std::string& InputFile(const uint8_t* data, size_t size, const char* suffix = "") {
  static const std::string path = [suffix] {
    const char* scratch = std::getenv("ZF_FUZZ_SCRATCH");
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = scratch && *scratch             ? scratch
                            : access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                                                            : (tmp ? tmp : "/tmp");
    std::string p = dir + "/zf-fuzz-" + std::to_string(getpid()) + suffix;
    std::atexit([] { std::remove(path.c_str()); });
    return p;
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();  // the harness, not the target, failed: stop the run
  }
  return path;
}

// Runs `f` on one input. The contract every target checks: bad input ends in
// zerofarm::Error (a ConfigError or an I/O error) with a one-line message,
// never in a crash, a sanitizer report, a hang or another exception type.
// Other exceptions escape, and libFuzzer reports them as a crash; a message
// of several lines aborts.
template <typename F>
void ExpectOnlyErrors(F&& f) {
  try {
    f();
  } catch (const zerofarm::Error& e) {
    const std::string what = e.what();
    if (what.find('\n') != std::string::npos) {
      std::fprintf(stderr, "zf-fuzz: an error message of several lines: %s\n", what.c_str());
      std::abort();
    }
  }
}

inline std::string Text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace zerofarm::fuzz
