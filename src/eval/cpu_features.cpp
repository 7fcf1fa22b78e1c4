// CPU and BLAS checks for the CPU evaluator (no LibTorch).
#include "zerofarm/eval/cpu_features.h"

#include <dlfcn.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "zerofarm/core/log.h"

namespace zerofarm::eval {

bool CpuHasBf16() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line);
    std::string w;
    while (words >> w)
      if (w == "avx512_bf16" || w == "amx_bf16") return true;
    return false;  // every core lists the same flags
  }
  return false;
}

std::string LoadedBlas() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string file = path.substr(path.rfind('/') + 1);
    if (file.rfind("libblas.so", 0) == 0 || file.rfind("libopenblas", 0) == 0 ||
        file.rfind("libmkl_rt", 0) == 0 || file.rfind("libblis", 0) == 0)
      return path;
  }
  return "";
}

bool IsReferenceBlas(const std::string& path) {
  // Debian installs the netlib BLAS as .../blas/libblas.so.3; OpenBLAS's
  // variant of the same soname lives in .../openblas-*/libblas.so.3.
  return path.find("/blas/libblas.so") != std::string::npos;
}

std::string ConfigureBlas(int threads) {
  const std::string blas = LoadedBlas();
  if (IsReferenceBlas(blas))
    ZF_LOG(WARN) << "the reference BLAS (" << blas << ") is in use: the network's dense layers run up to 12x "
                 << "slower than with OpenBLAS; install libopenblas0-pthread (tools/setup.sh does)";
  // OpenBLAS exports this; with any other BLAS the symbol is absent.
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    set(threads < 1 ? 1 : threads);
  return blas;
}

bool KeepFreedMemory() {
  if (const char* tunables = std::getenv("GLIBC_TUNABLES");
      tunables && std::strstr(tunables, "glibc.malloc."))
    return false;
  // 32 MiB is the largest mmap threshold glibc takes on 64-bit (HEAP_MAX_SIZE / 2);
  // setting it also stops glibc from moving it by itself.
  const bool mmap = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;
  const bool trim = mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
  return mmap && trim;
}

}  // namespace zerofarm::eval
