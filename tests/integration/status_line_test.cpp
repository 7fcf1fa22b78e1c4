// The status line on a real terminal (issue 24 point 3): a farm runs on a
// pseudo-terminal; what it writes is replayed through a small terminal model
// (carriage return, erase to end of line, newline), and no line left on the
// screen holds both status text and a log line. Only the parent asserts.
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "farm_check.h"
#include "skip.h"
#include "test_paths.h"

using namespace zerofarm::testing;

namespace {

// The lines a terminal shows after `bytes`: '\r' moves to column 0, ESC[K
// erases to the end of the line, '\n' ends the line (the pty's ONLCR sends
// "\r\n"), other escape sequences are skipped, other bytes overwrite.
std::vector<std::string> Screen(const std::string& bytes) {
  std::vector<std::string> lines;
  std::string cur;
  size_t col = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\r') {
      col = 0;
    } else if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
      col = 0;
    } else if (c == '\033' && i + 1 < bytes.size() && bytes[i + 1] == '[') {
      size_t j = i + 2;
      while (j < bytes.size() && !std::isalpha(static_cast<unsigned char>(bytes[j]))) ++j;
      if (j < bytes.size() && bytes[j] == 'K') cur.resize(std::min(cur.size(), col));
      i = j;
    } else {
      if (col < cur.size())
        cur[col] = c;
      else
        cur.append(col - cur.size(), ' ').push_back(c);
      ++col;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

// Runs `args` on a new pseudo-terminal (its stdin, stdout and stderr) until it
// exits or `seconds` pass; returns everything it wrote and sets *status.
std::string RunOnTerminal(const std::vector<std::string>& args, double seconds, int* status) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  winsize ws{};
  ws.ws_row = 40;
  ws.ws_col = 300;  // wide enough for the whole status line
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
  if (pid == 0) {
    execv(argv[0], argv.data());
    _exit(127);
  }
  REQUIRE(pid > 0);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: every process closed the terminal
    out.append(buf, static_cast<size_t>(n));
  }
  // EIO comes when the last process closes the terminal, a moment before the
  // farm has exited: give it until the deadline (at least 10 s) to be reaped.
  const auto reap_by = std::max<std::chrono::steady_clock::time_point>(
      std::chrono::time_point_cast<std::chrono::steady_clock::duration>(deadline),
      std::chrono::steady_clock::now() + std::chrono::seconds(10));
  pid_t reaped = 0;
  while ((reaped = waitpid(pid, status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < reap_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (reaped != pid) {
    kill(pid, SIGKILL);
    waitpid(pid, status, 0);
    *status = -1;
  }
  close(master);
  return out;
}

}  // namespace

TEST_CASE("on a terminal the log lines of every process appear above the status line and never on it",
          "[multiprocess][status]") {
  // A chroot without /dev/pts has no pseudo-terminals: skip visibly (tools/check_tests.py allows it
  // only where Python's os.openpty() fails too).
  int probe_master = -1, probe_slave = -1;
  if (openpty(&probe_master, &probe_slave, nullptr, nullptr, nullptr) != 0)
    ZF_SKIP("no pseudo-terminal here: openpty: " << std::strerror(errno));
  close(probe_master);
  close(probe_slave);
  ScratchDir dir("zf-status-tty");
  // Small shards: the writer (a child) logs "wrote ..." while the status line is up; the
  // evaluator and the workers log at their start and stop.
  const std::vector<std::string> args = {ZF_BINARY,
                                         "run",
                                         "--game",
                                         "connect4",
                                         "--workers",
                                         "2",
                                         "--gpus",
                                         "0",
                                         "--games-per-worker",
                                         "8",
                                         "--simulations",
                                         "12",
                                         "--blocks",
                                         "1",
                                         "--filters",
                                         "8",
                                         "--out",
                                         dir / "run",
                                         "--seed",
                                         "11",
                                         "--host-id",
                                         kTestHost,
                                         "--shard-positions",
                                         "20",
                                         "--games",
                                         "20",
                                         "--duration",
                                         "300"};
  int status = 0;
  const std::string bytes = RunOnTerminal(args, 120, &status);
  INFO(bytes);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const std::regex log_line(R"(^[DIWE] \d\d:\d\d:\d\d\.\d{3} \[[^\]]+ \d+\] \S+:\d+\] .*)");
  const std::regex status_line(R"(^ *\d+s  games \d+)");  // the status line as it starts
  int status_lines = 0, child_log_lines = 0;
  for (const std::string& line : Screen(bytes)) {
    INFO("screen line: " << line);
    const bool has_status = std::regex_search(line, status_line);
    const bool has_log = line.find(".cpp:") != std::string::npos;
    CHECK_FALSE((has_log && line.find("  games/s ") != std::string::npos));  // glued, either way round
    if (has_log) CHECK(std::regex_match(line, log_line));                    // a log line starts at column 0
    if (has_status) {
      ++status_lines;
      // "of N games", the time left and an ETA.
      CHECK(line.find("games ") != std::string::npos);
      CHECK(line.find(" of 20 (") != std::string::npos);
      CHECK(line.find(" of 5m00s, ETA ") != std::string::npos);
    }
    if (has_log && line.find("[supervisor") == std::string::npos) ++child_log_lines;
  }
  CHECK(status_lines >= 1);     // the last status line stays on the screen
  CHECK(child_log_lines >= 3);  // the evaluator's, workers' and writer's lines went through the relay
  CHECK(bytes.find("zerofarm run: game budget reached") != std::string::npos);  // the summary
}
