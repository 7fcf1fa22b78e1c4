// The BLAS and CPU checks of the CPU evaluator.
#include "zerofarm/eval/cpu_features.h"

#include <malloc.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "skip.h"

namespace zerofarm::eval {
namespace {

TEST_CASE("IsReferenceBlas tells Debian's netlib BLAS from OpenBLAS", "[eval]") {
  CHECK(IsReferenceBlas("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"));
  CHECK_FALSE(IsReferenceBlas("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"));
  CHECK_FALSE(IsReferenceBlas("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"));
  CHECK_FALSE(IsReferenceBlas(""));
}

// /proc/cpuinfo's lines for four kinds of CPU: the first as this project's 2-core Intel
// VM of 2026-12-01 lists it (its flags cut to the ones that matter and a few around
// them), the others cut to the vendor and the flags the rule reads.
constexpr const char* kIntelNoAmx =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 207\n"
    "flags\t\t: fpu avx2 avx512f avx512bw avx_vnni avx512_bf16 avx512_fp16 arat\n\n"
    "processor\t: 1\nvendor_id\t: GenuineIntel\nflags\t\t: fpu avx2\n";
constexpr const char* kIntelAmx =
    "vendor_id\t: GenuineIntel\nflags\t\t: avx512f avx512_bf16 amx_bf16 amx_tile amx_int8\n";
constexpr const char* kAmdZen4 = "vendor_id\t: AuthenticAMD\nflags\t\t: avx2 avx512f avx512_bf16\n";
constexpr const char* kAmdAvx2 = "vendor_id\t: AuthenticAMD\nflags\t\t: avx2 fma\n";

CpuInfo Parse(const char* text) {
  std::istringstream in(text);
  return ParseCpuInfo(in);
}

TEST_CASE("ParseCpuInfo reads the first CPU's vendor and flags", "[eval]") {
  const CpuInfo intel = Parse(kIntelNoAmx);
  CHECK(intel.vendor == "GenuineIntel");
  CHECK(intel.flags.size() == 8);  // the first CPU's line, not the second's
  CHECK(intel.Has("avx512_bf16"));
  CHECK_FALSE(intel.Has("avx512"));  // whole words only
  const CpuInfo none = Parse("");
  CHECK(none.vendor.empty());
  CHECK(none.flags.empty());
  CHECK(Parse("flags: a b\n").vendor.empty());
}

TEST_CASE("auto precision: bf16 on AMX and on AMD with bf16 units, fp32 on Intel without AMX", "[eval]") {
  CHECK(CpuHasBf16(Parse(kIntelNoAmx)));
  CHECK_FALSE(AutoPrefersBf16(Parse(kIntelNoAmx)));  // measured 0.62-0.70x fp32 there
  CHECK(AutoPrefersBf16(Parse(kIntelAmx)));
  CHECK(AutoPrefersBf16(Parse(kAmdZen4)));
  CHECK_FALSE(CpuHasBf16(Parse(kAmdAvx2)));
  CHECK_FALSE(AutoPrefersBf16(Parse(kAmdAvx2)));
  CHECK_FALSE(AutoPrefersBf16(CpuInfo{}));  // an unreadable /proc/cpuinfo
  // This machine: auto never picks bf16 where the CPU has no bf16 units.
  CHECK((CpuHasBf16() || !AutoPrefersBf16()));
}

TEST_CASE("LoadedBlas names a BLAS library or nothing", "[eval]") {
  const std::string blas = LoadedBlas();
  if (!blas.empty()) CHECK(blas.find("blas") != std::string::npos);
  CHECK(ConfigureBlas(1) == blas);
}

TEST_CASE("KeepFreedMemory: a freed block of a few MiB stays in the heap instead of going back to the kernel",
          "[eval]") {
  if (const char* t = std::getenv("GLIBC_TUNABLES"); t && std::strstr(t, "glibc.malloc."))
    ZF_SKIP("GLIBC_TUNABLES sets malloc options: KeepFreedMemory leaves them alone");
#if defined(__SANITIZE_ADDRESS__)
  ZF_SKIP("AddressSanitizer replaces malloc: mallopt and mallinfo2 do not reach its allocator");
#endif
  REQUIRE(KeepFreedMemory());
  // With glibc's defaults this block would be a fresh mmap (hblkhd grows by
  // it) and unmapped again when freed: a page fault per page on every batch.
  const size_t mapped_before = mallinfo2().hblkhd;
  void* block = std::malloc(8u << 20);
  REQUIRE(block != nullptr);
  std::memset(block, 1, 8u << 20);
  CHECK(mallinfo2().hblkhd == mapped_before);
  const size_t heap_with_block = mallinfo2().arena;
  std::free(block);
  CHECK(mallinfo2().arena == heap_with_block);  // not trimmed: the next batch reuses it
}

}  // namespace
}  // namespace zerofarm::eval
