#pragma once
// What this CPU and this process's BLAS can do for the CPU evaluator. No
// LibTorch here: the supervisor, the bench and tests may ask freely.
#include <string>

namespace zerofarm::eval {

// True when /proc/cpuinfo lists avx512_bf16 or amx_bf16: bfloat16 inference
// then runs on the CPU's own bf16 units (oneDNN) and is about twice as fast
// as fp32 for zerofarm's nets. False when the file cannot be read.
bool CpuHasBf16();

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
