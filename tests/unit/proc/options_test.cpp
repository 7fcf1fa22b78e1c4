// The option table (proc/options.h): every row complete, ranges named in
// their errors, config text round trips, the shipped example is the table's.
#include "zerofarm/proc/options.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/game.h"

using namespace zerofarm;
using namespace zerofarm::proc;

TEST_CASE("options: every row has a name or key and help and a valid default and unique spellings",
          "[proc][options]") {
  std::set<std::string> names, keys;
  const FarmConfig defaults;
  for (const auto& o : OptionTable()) {
    INFO(o.Display());
    CHECK_FALSE(o.help.empty());
    CHECK_FALSE((o.name.empty() && o.key.empty()));
    // Help prints the default, once; only an empty default says in words what it means.
    if (!o.Default().empty() && o.kind != OptionKind::kFlag)
      CHECK(o.help.find("default") == std::string::npos);
    if (!o.name.empty()) CHECK(names.insert(o.name).second);
    if (!o.key.empty()) CHECK(keys.insert(o.key).second);
    if (o.kind != OptionKind::kSupervisor && !o.name.empty()) CHECK(o.commands != 0);
    CHECK_NOTHROW(CheckOption(o, defaults));  // the default lies in its own range
    if (o.kind == OptionKind::kNumber) CHECK(o.lo <= o.hi);
    if (o.kind == OptionKind::kFlag) CHECK((o.flag_value == "0" || o.flag_value == "1"));
  }
  CHECK(names.count("workers"));
  CHECK(keys.count("eval_threads"));
}

TEST_CASE("options: --game's help lists every game of the registry", "[proc][options]") {
  const OptionSpec* game = FindOptionByName("game");
  REQUIRE(game != nullptr);
  for (const auto& name : game::GameNames()) CHECK_THAT(game->help, Catch::Contains(name));
}

TEST_CASE("options: a value out of range or unparsable names its option", "[proc][options]") {
  FarmConfig c;
  c.out = "/tmp/run";
  c.workers = 5000;
  CHECK_THROWS_WITH(c.Validate(), Catch::Contains("--workers must be in [0, 1024], got 5000"));
  c.workers = 1;
  c.blocks = 81;
  CHECK_THROWS_WITH(c.Validate(), Catch::Contains("--blocks must be in [1, 80], got 81"));
  c.blocks = 6;
  CHECK_NOTHROW(c.Validate());
  const OptionSpec* workers = FindOptionByName("workers");
  REQUIRE(workers != nullptr);
  CHECK_THROWS_WITH(SetOption(*workers, &c, "abc", "--workers"), "--workers: bad value 'abc' (an integer)");
  CHECK_THROWS_WITH(SetOption(*FindOptionByName("seed"), &c, "-1", "--seed"),
                    Catch::Contains("--seed: bad value '-1'"));
  CHECK_THROWS_WITH(SetOption(*FindOptionByName("search"), &c, "mcts", "--search"),
                    "--search: bad value 'mcts' (one of puct, gumbel)");
  CHECK_THROWS_WITH(FarmConfig::FromText("c-puct = lots\n"),
                    Catch::Contains("config:1: c_puct: bad value 'lots'"));
}

TEST_CASE("options: the effective config reads back as itself with every key changed", "[proc][options]") {
  FarmConfig c;
  // Every key away from its default: numbers to 3 above the bottom of their
  // range (or a fraction of it for fractions), text to a word, flags flipped, choices to the last.
  for (const auto& o : OptionTable()) {
    if (o.key.empty()) continue;
    std::string v;
    switch (o.kind) {
      case OptionKind::kNumber: {
        std::ostringstream os;
        os << (o.Default().find('.') != std::string::npos || o.hi <= 1 ? o.lo + (o.hi - o.lo) * 0.3
                                                                       : std::min(o.hi, o.lo + 3));
        v = os.str();
        break;
      }
      case OptionKind::kText:
        v = "w" + o.key;
        break;
      case OptionKind::kSupervisor:
        v = o.key == "run_id" ? "wrun" : "3";
        break;
      case OptionKind::kFlag:
        v = o.flag_value;
        break;
      case OptionKind::kChoice:
        v = o.choices.back();
        break;
    }
    INFO(o.key << " = " << v);
    REQUIRE_NOTHROW(SetOption(o, &c, v, o.key));
    if (o.kind != OptionKind::kNumber) CHECK(o.get(c) != o.Default());
  }
  const std::string text = c.ToText();
  const FarmConfig back = FarmConfig::FromText(text);
  CHECK(back.ToText() == text);
  CHECK(back.epoch == 3);
  CHECK(back.search.gumbel);
  CHECK_FALSE(back.search.solver);
  // A user's file: the same, but the supervisor's keys are left to the supervisor.
  const std::string path = "/tmp/zf-options-test-" + std::to_string(getpid()) + ".conf";
  std::ofstream(path) << text;
  const FarmConfig user = FarmConfig::FromFile(path);
  std::remove(path.c_str());
  CHECK(user.epoch == 0);
  CHECK(user.run_id.empty());
  CHECK(user.seed == back.seed);
  CHECK(user.search.c_puct == back.search.c_puct);
}

TEST_CASE("options: the shipped example config is the generated one", "[proc][options]") {
  const std::string path = zerofarm::testing::SourceDir() + "/docs/config-example.conf";
  std::ifstream in(path);
  REQUIRE(in.good());
  std::ostringstream shipped;
  shipped << in.rdbuf();
  INFO("regenerate it: zerofarm config --example > docs/config-example.conf");
  CHECK(shipped.str() == ExampleConfig());
  // The example, uncommented, is a valid config file of the defaults.
  std::string uncommented;
  std::istringstream lines(ExampleConfig());
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("# ", 0) == 0 && line.find(" = ") != std::string::npos &&
        line.find(' ', 2) == line.find(" = "))
      uncommented += line.substr(2) + "\n";
  CHECK(FarmConfig::FromText(uncommented).ToText() == FarmConfig().ToText());
}

TEST_CASE("options: the table's fingerprint changes with anything a binary accepts, not with help",
          "[proc][options]") {
  const std::vector<OptionSpec>& table = OptionTable();
  const std::string fp = OptionTableFingerprint(table);
  CHECK(fp.size() == 16);
  CHECK(fp == OptionTableFingerprint());  // the default argument is the table
  CHECK(fp == OptionTableFingerprint(table));
  std::vector<OptionSpec> reworded = table;
  reworded[0].help += " (reworded)";
  CHECK(OptionTableFingerprint(reworded) == fp);
  std::vector<OptionSpec> fewer = table;
  fewer.pop_back();  // an option one build has and the other not
  CHECK(OptionTableFingerprint(fewer) != fp);
  std::vector<OptionSpec> renamed = table;
  renamed[3].key += "x";
  CHECK(OptionTableFingerprint(renamed) != fp);
  // A number's range and a default (the field a row reads) count too.
  auto number = std::find_if(table.begin(), table.end(),
                             [](const OptionSpec& o) { return o.kind == OptionKind::kNumber; });
  REQUIRE(number != table.end());
  std::vector<OptionSpec> other_range = table;
  other_range[number - table.begin()].hi = number->hi == 12345 ? 12346 : 12345;
  CHECK(OptionTableFingerprint(other_range) != fp);
  std::vector<OptionSpec> other_default = table;
  other_default[number - table.begin()].get = [](const FarmConfig&) { return std::string("12345"); };
  CHECK(OptionTableFingerprint(other_default) != fp);
}
