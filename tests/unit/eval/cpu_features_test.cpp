// The BLAS and CPU checks of the CPU evaluator.
#include "zerofarm/eval/cpu_features.h"

#include <malloc.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>

#include "skip.h"

namespace zerofarm::eval {
namespace {

TEST_CASE("IsReferenceBlas tells Debian's netlib BLAS from OpenBLAS", "[eval]") {
  CHECK(IsReferenceBlas("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"));
  CHECK_FALSE(IsReferenceBlas("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"));
  CHECK_FALSE(IsReferenceBlas("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"));
  CHECK_FALSE(IsReferenceBlas(""));
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
