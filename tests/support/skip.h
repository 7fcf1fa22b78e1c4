#pragma once
// Catch2 v2 has no SKIP(): ZF_SKIP(reason) asks for a skip and returns. The
// listener of skip.cpp (linked into every test executable) decides when the
// test case ends: with no failed check, it prints "[skipped] reason" and the
// process exits 77 once the run is over with nothing failed, which CTest's
// SKIP_RETURN_CODE (tests/CMakeLists.txt) reports as a skip, never as a pass
// (a crash after the line is a failure); after a failed check (before the skip, or in another
// SECTION of the same test), it prints "[skip refused] reason" instead, and
// the test fails as its checks say: a failure never hides behind a skip.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

namespace zerofarm::testing {
// Notes a skip of the running test case (skip.cpp); the first reason is kept.
void RequestSkip(const std::string& reason);
}  // namespace zerofarm::testing

#define ZF_SKIP(reason)                                      \
  do {                                                       \
    std::ostringstream zf_skip_reason_;                      \
    zf_skip_reason_ << reason;                               \
    ::zerofarm::testing::RequestSkip(zf_skip_reason_.str()); \
    WARN("skip requested: " << zf_skip_reason_.str());       \
    return;                                                  \
  } while (0)
