// The listener behind ZF_SKIP (skip.h): one per test executable, compiled
// into each through the zf_test_support target.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include "skip.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace zerofarm::testing {
namespace {

// The skip asked for by the running test case ("" = none). Tests run one at
// a time in a test executable; only the main thread calls ZF_SKIP.
std::string& SkipReason() {
  static std::string reason;
  return reason;
}

// A run that skipped and failed nothing exits with kSkipExit, the status
// CTest's SKIP_RETURN_CODE reads as a skip (tests/CMakeLists.txt): any other
// end of the process after a "[skipped]" line (a failure, a sanitizer's
// report, a crash) is not a skip.
constexpr int kSkipExit = 77;
void ExitAsSkip() {
  std::cout.flush();
  std::fflush(nullptr);
  std::_Exit(kSkipExit);
}

class SkipListener : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;

  void testCaseStarting(const Catch::TestCaseInfo&) override { SkipReason().clear(); }

  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    if (SkipReason().empty()) return;
    if (stats.totals.assertions.failed > 0)
      std::cout << "[skip refused] " << SkipReason() << " (" << stats.totals.assertions.failed
                << " check(s) failed in this test: it fails)" << std::endl;
    else {
      std::cout << "[skipped] " << SkipReason() << std::endl;
      skipped_ = true;
    }
    SkipReason().clear();
  }

  // After Catch's summary, main returns 0 and exit() runs the handler.
  void testRunEnded(const Catch::TestRunStats& stats) override {
    if (skipped_ && stats.totals.assertions.failed == 0 && stats.totals.testCases.failed == 0)
      std::atexit(ExitAsSkip);
  }

 private:
  bool skipped_ = false;
};

}  // namespace

void RequestSkip(const std::string& reason) {
  if (SkipReason().empty()) SkipReason() = reason.empty() ? "(no reason given)" : reason;
}

CATCH_REGISTER_LISTENER(SkipListener)

}  // namespace zerofarm::testing
