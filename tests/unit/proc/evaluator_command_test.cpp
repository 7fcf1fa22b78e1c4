// The evaluator's argv (proc/evaluator_command.h): what the supervisor execs
// is what the evaluator parses back; anything else is one ConfigError.
#include "zerofarm/proc/evaluator_command.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "zerofarm/core/error.h"
#include "zerofarm/proc/roles.h"

using namespace zerofarm;
using namespace zerofarm::proc;
using List = std::vector<std::string>;

namespace {

// Parses `args` as cli::Main passes them: argv[0] is the command word.
EvaluatorArgs Parse(const List& args) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return ParseEvaluatorArgs(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST_CASE("the evaluator argv the supervisor builds parses back to the same arguments",
          "[proc][evaluator_command]") {
  const EvaluatorArgs in{"/zf-12-ab-run", 3, "/runs/x/shards/h/config.txt"};
  const List argv = EvaluatorArgv(in);
  CHECK(argv == List{"zf-eval-3", "__evaluator", "--shm", "/zf-12-ab-run", "--index", "3", "--config",
                     "/runs/x/shards/h/config.txt"});
  const EvaluatorArgs out = Parse(List(argv.begin() + 1, argv.end()));
  CHECK(out.segment_name == in.segment_name);
  CHECK(out.index == in.index);
  CHECK(out.config_path == in.config_path);
}

TEST_CASE("a bad evaluator argv is one ConfigError", "[proc][evaluator_command]") {
  const List ok{"__evaluator", "--shm", "/s", "--index", "0", "--config", "c"};
  CHECK_NOTHROW(Parse(ok));
  CHECK_THROWS_AS(Parse({"__evaluator", "--shm", "/s", "--index", "0"}), ConfigError);
  CHECK_THROWS_AS(Parse({"__evaluator", "--shm", "/s", "--index", "0", "--config"}), ConfigError);
  CHECK_THROWS_AS(Parse({"__evaluator", "--shm", "/s", "--index", "x", "--config", "c"}), ConfigError);
  CHECK_THROWS_AS(Parse({"__evaluator", "--shm", "/s", "--index", "-1", "--config", "c"}), ConfigError);
  CHECK_THROWS_AS(Parse({"__evaluator", "--shm", "/s", "--shm", "/t", "--index", "0", "--config", "c"}),
                  ConfigError);
  CHECK_THROWS_AS(Parse({"__evaluator", "--shm", "/s", "--index", "0", "--config", "c", "--gpu", "1"}),
                  ConfigError);
}

TEST_CASE("children are named by their role", "[proc][evaluator_command]") {
  CHECK(ChildRole{ChildRole::Kind::kWorker, 3}.Name() == "worker-3");
  CHECK(ChildRole{ChildRole::Kind::kEvaluator, 0}.Name() == "eval-0");
  CHECK(ChildRole{ChildRole::Kind::kWriter, 0}.Name() == "writer");
}
