#pragma once
// What this CPU and this process's BLAS can do for the CPU evaluator. No
// LibTorch here: the supervisor, the bench and tests may ask freely.
#include <istream>
#include <string>
#include <vector>

namespace zerofarm::eval {

// What /proc/cpuinfo says of the first CPU listed (every core lists the same).
struct CpuInfo {
  std::string vendor;              // vendor_id: GenuineIntel, AuthenticAMD, ...; "" when absent
  std::vector<std::string> flags;  // the flags line, word by word
  bool Has(const std::string& flag) const;
};
// Parses /proc/cpuinfo's text; fields it does not find stay empty.
CpuInfo ParseCpuInfo(std::istream& in);
// This machine's /proc/cpuinfo; empty when the file cannot be read.
CpuInfo ReadCpuInfo();

// True when the CPU lists avx512_bf16 or amx_bf16: it has bfloat16 units.
bool CpuHasBf16(const CpuInfo& cpu);
bool CpuHasBf16();

// What `--precision auto` takes on a CPU: bf16 where bf16 was measured to pay,
// or at least not to cost, fp32 elsewhere (docs/benchmarks.md, "Which precision
// auto picks"):
//  - amx_bf16 (Intel with AMX): bf16, about 2x fp32 for the farm;
//  - avx512_bf16 on AMD (Zen 4 and later): bf16, level with fp32 or ahead, and
//    what the run of the shipped network ran;
//  - avx512_bf16 on Intel without AMX (or with AMX hidden, as in some VMs):
//    fp32; there bf16 made 0.62-0.66x fp32's farm positions/s and
//    0.66-0.70x its trainer positions/s (2026-12-01);
//  - no bf16 units: fp32 (bf16 is emulated, 2.6x slower).
bool AutoPrefersBf16(const CpuInfo& cpu);
bool AutoPrefersBf16();

// The BLAS library mapped into this process (the resolved path from
// /proc/self/maps of libblas, libopenblas, libmkl or libblis), or "" when none
// is mapped yet.
std::string LoadedBlas();
// True for the netlib reference BLAS (Debian's .../blas/libblas.so.3): up to
// 12x slower than OpenBLAS for the network's dense layers.
bool IsReferenceBlas(const std::string& path);

// Called by an evaluator once LibTorch is loaded: warns (one log line) when
// the reference BLAS is in use, and limits OpenBLAS's own thread pool to
// `threads` (an idle OpenBLAS thread spins and takes a worker's core).
// Returns LoadedBlas().
std::string ConfigureBlas(int threads);

// Makes glibc's malloc keep the memory a process frees instead of returning
// it to the kernel: blocks up to 32 MiB come from the heap (not a fresh mmap
// each), and up to 1 GiB of free heap stays mapped. A network call allocates
// and frees its activations (0.1-10 MiB) on every batch; with glibc's defaults
// every batch faulted that memory in again, and the evaluator spent most of its
// time in page faults (docs/benchmarks.md, "The allocator"). Called once by
// every process that runs a network (the evaluator, the trainer), before its
// first batch. A user's own GLIBC_TUNABLES malloc settings win: then it does
// nothing and returns false; true when both settings took.
bool KeepFreedMemory();

}  // namespace zerofarm::eval
