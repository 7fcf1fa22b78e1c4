// zf_skip_selftest: test cases that use ZF_SKIP (skip.h) the right way and
// the wrong way, run by tests/support/skip_selftest.sh (the CTest entry
// `skip_honesty`), which checks what each prints and its exit code. Two of
// them fail on purpose: they are not discovered as tests of their own.
#include "skip.h"

TEST_CASE("skips with no failed check", "[skip-selftest]") {
  CHECK(1 + 1 == 2);
  ZF_SKIP("nothing to run here");
}

TEST_CASE("fails a check then skips", "[skip-selftest]") {
  CHECK(1 + 1 == 3);  // fails on purpose
  ZF_SKIP("this skip must be refused");
}

// (A skip returns from the whole test case: sections after it are never
// reached, so the failing section comes first.)
TEST_CASE("one section fails and another skips", "[skip-selftest]") {
  SECTION("fails") { CHECK(false); }  // fails on purpose
  SECTION("skips") { ZF_SKIP("this skip must be refused too"); }
}
