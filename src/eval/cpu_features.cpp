// CPU and BLAS checks for the CPU evaluator (no LibTorch).
#include "zerofarm/eval/cpu_features.h"

#include <dlfcn.h>
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "zerofarm/core/log.h"

namespace zerofarm::eval {

bool CpuInfo::Has(const std::string& flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

CpuInfo ParseCpuInfo(std::istream& in) {
  CpuInfo cpu;
  bool have_vendor = false, have_flags = false;
  std::string line;
  while ((!have_vendor || !have_flags) && std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    std::istringstream value(line.substr(colon + 1));
    if (key == "vendor_id" && !have_vendor) {
      value >> cpu.vendor;
      have_vendor = true;
    } else if (key == "flags" && !have_flags) {
      for (std::string w; value >> w;) cpu.flags.push_back(w);
      have_flags = true;
    }
  }
  return cpu;
}

CpuInfo ReadCpuInfo() {
  std::ifstream in("/proc/cpuinfo");
  return in ? ParseCpuInfo(in) : CpuInfo{};
}

bool CpuHasBf16(const CpuInfo& cpu) { return cpu.Has("avx512_bf16") || cpu.Has("amx_bf16"); }
bool CpuHasBf16() { return CpuHasBf16(ReadCpuInfo()); }

bool AutoPrefersBf16(const CpuInfo& cpu) {
  if (cpu.Has("amx_bf16")) return true;
  return cpu.Has("avx512_bf16") && cpu.vendor == "AuthenticAMD";
}
bool AutoPrefersBf16() { return AutoPrefersBf16(ReadCpuInfo()); }

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
