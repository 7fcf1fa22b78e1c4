// The BLAS and CPU checks of the CPU evaluator.
#include <catch2/catch.hpp>

#include "zerofarm/eval/cpu_features.h"

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

}  // namespace
}  // namespace zerofarm::eval
