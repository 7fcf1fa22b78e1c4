// The option table as cxxopts options (src/cli/options.cpp): each default
// shown once, every game listed, bad values named, aliases, --config.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "commands.h"
#include "skip.h"
#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/proc/roles.h"

using namespace zerofarm;

namespace {
size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// What `command` (a cli::*Command) throws for args (after a program name); "" if nothing.
std::string CommandError(int (*command)(int, char**), std::vector<std::string> args) {
  args.insert(args.begin(), "zerofarm-test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  try {
    command(static_cast<int>(args.size()), argv.data());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Parses args (after a program name) with the table's options of `command`.
proc::FarmConfig Parse(proc::OptionCommand command, std::vector<std::string> args) {
  args.insert(args.begin(), "zerofarm-test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  cxxopts::Options options("test");
  cli::AddTableOptions(options, command);
  cxxopts::ParseResult r;
  int code = -1;
  REQUIRE(cli::ParseArgs(options, static_cast<int>(argv.size()), argv.data(), &r, &code));
  return cli::ReadTableOptions(r, command);
}
// The message of the ConfigError that parsing args throws ("" when none).
std::string ParseError(proc::OptionCommand command, std::vector<std::string> args) {
  args.insert(args.begin(), "zerofarm-test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  cxxopts::Options options("test");
  cli::AddTableOptions(options, command);
  cxxopts::ParseResult r;
  int code = -1;
  try {
    cli::ParseArgs(options, static_cast<int>(argv.size()), argv.data(), &r, &code);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("cli options: help shows each default once and every game", "[cli][options]") {
  for (const auto command :
       {proc::kRun, proc::kSelfplay, proc::kTune, proc::kLoop, proc::kBench, proc::kEval, proc::kTrain}) {
    cxxopts::Options options("test");
    cli::AddTableOptions(options, command);
    const std::string help = options.help();
    INFO(help);
    size_t with_default = 0;
    for (const auto& o : proc::OptionTable())
      if ((o.commands & command) && !o.name.empty() && o.kind != proc::OptionKind::kFlag &&
          !o.Default().empty())
        ++with_default;
    CHECK(Count(help, "(default: ") == with_default);
    CHECK(Count(help, "(default: \"\")") == 0);
    CHECK(Count(help, "--config") == 1);
    if (proc::FindOptionByName("game")->commands & command) {
      for (const auto& g : game::GameNames()) CHECK_THAT(help, Catch::Contains(g));
      CHECK_THAT(help, Catch::Contains("--game-plugin"));  // a game outside the tree (issue 73)
    }
  }
}

TEST_CASE("cli options: the same option reads the same way in every command", "[cli][options]") {
  CHECK(Parse(proc::kRun, {"--blocks", "70"}).blocks == 70);
  CHECK(Parse(proc::kTrain, {"--blocks", "70"}).blocks == 70);  // 1..80 in both
  CHECK(Parse(proc::kRun, {}).workers == Parse(proc::kLoop, {}).workers);
  CHECK(Parse(proc::kBench, {}).workers == Parse(proc::kTune, {}).workers);
  CHECK(Parse(proc::kRun, {"--no-solver"}).search.solver == false);
  CHECK(Parse(proc::kEval, {"--no-solver"}).search.solver == false);
}

TEST_CASE("cli options: a bad value names its option", "[cli][options]") {
  CHECK_THROWS_WITH(Parse(proc::kRun, {"--workers", "abc"}), "--workers: bad value 'abc' (an integer)");
  CHECK_THROWS_WITH(Parse(proc::kRun, {"--c-puct=x"}), "--c-puct: bad value 'x' (a number)");
  CHECK_THROWS_WITH(Parse(proc::kRun, {"--game", "chess"}),
                    Catch::StartsWith("--game: bad value 'chess' (one of "));
}

TEST_CASE("cli options: an unknown option or config key names the nearest one", "[cli][options]") {
  CHECK(ParseError(proc::kRun, {"--worker", "2"}) == "unknown option --worker (did you mean --workers?)");
  CHECK(ParseError(proc::kRun, {"--simulation=8"}) ==
        "unknown option --simulation (did you mean --simulations?)");
  CHECK(ParseError(proc::kRun, {"--random-opening", "4"}) ==
        "unknown option --random-opening (did you mean --random-opening-plies?)");
  CHECK(ParseError(proc::kRun, {"--zzzzzz"}) == "unknown option --zzzzzz");  // nothing near
  // Without "--": cxxopts leaves the word unmatched.
  CHECK(ParseError(proc::kRun, {"workers", "2"}) ==
        "unexpected argument 'workers' (did you mean --workers?)");
  CHECK_THROWS_WITH(proc::FarmConfig::FromText("worker = 2\n"),
                    "config:1: unknown key 'worker' (did you mean workers?)");
  CHECK_THROWS_WITH(proc::FarmConfig::FromText("games-per-workers = 2\n"),
                    "config:1: unknown key 'games-per-workers' (did you mean games_per_worker?)");
  CHECK(proc::NearestName("gpu", {"gpus", "games", "go"}) == "gpus");
  CHECK(proc::NearestName("x", {"gpus", "out"}).empty());
}

TEST_CASE("cli options: old spellings are aliases of one option", "[cli][options]") {
  CHECK(Parse(proc::kTrain, {"--threads", "3"}).eval_threads == 3);
  CHECK(Parse(proc::kEval, {"--threads=4"}).eval_threads == 4);
  CHECK_FALSE(Parse(proc::kTrain, {"--quiet"}).status_line);
  CHECK_FALSE(Parse(proc::kRun, {"--no-status"}).status_line);
}

TEST_CASE("cli options: --config is read first and the command line wins", "[cli][options]") {
  const std::string path = "/tmp/zf-cli-options-test-" + std::to_string(getpid()) + ".conf";
  std::ofstream(path) << "simulations = 33\nc-puct = 2.5\nrun_id = ignored\n";
  const proc::FarmConfig c = Parse(proc::kTune, {"--config", path, "--simulations", "44"});
  std::remove(path.c_str());
  CHECK(c.search.simulations == 44);
  CHECK(c.search.c_puct == 2.5f);
  CHECK(c.run_id.empty());
}

// ---- every command's own options: declared once, defaults from the config structs, none ignored ----
namespace {

// The settings train, loop, bench and tune hand to their modules, as text:
// every field, written out here (not through the option tables), so that a
// row bound to the wrong field, or a field the command overwrites, shows.
std::string Dump(const proc::FarmConfig& f) {
  return f.ToText() + "allow_foreign_dir=" + std::to_string(f.allow_foreign_dir);
}
std::string Dump(const learn::TrainConfig& c) {
  std::ostringstream os;  // *_given left out: they say which options were given, not a setting
  const eval::TrainerOptions& o = c.optim;
  os << c.run << ' ' << c.weights << ' ' << c.blocks << ' ' << c.filters << ' ' << c.score_head << ' '
     << c.value_channels << ' ' << c.batch << ' ' << c.window << ' ' << c.min_positions << ' ' << c.replay
     << ' ' << c.value_discount << ' ' << c.q_weight << ' ' << c.bootstrap_sampled << ' ' << c.steps << ' '
     << c.duration << ' ' << c.checkpoint_steps << ' ' << c.augment << ' ' << c.wait << ' ' << c.progress
     << ' ' << c.seed << " | " << o.learning_rate << ' ' << o.momentum << ' ' << o.l2 << ' '
     << o.intra_op_threads << ' ' << o.bf16 << ' ' << o.seed << ' ' << o.cuda << ' ' << o.channels_last << ' '
     << o.cuda_graph << ' ' << o.ownership_weight << ' ' << o.value_weight;
  return os.str();
}
std::string Words(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& w : v) s += w + ';';
  return s;
}
std::string Ints(const std::vector<int>& v) {
  std::string s;
  for (int i : v) s += std::to_string(i) + ';';
  return s;
}
std::string Dump(const learn::LoopConfig& c) {
  std::ostringstream os;
  os << Dump(c.farm) << ' ' << c.hours << ' ' << c.eval_every << ' ' << Words(c.pons) << ' '
     << c.eval_positions << ' ' << c.eval_simulations << ' ' << c.eval_solver_simulations << ' '
     << Words(c.run_args) << ' ' << Words(c.train_args) << ' ' << c.cpu_hours << ' ' << c.final_mean << ' '
     << Words(c.trainer_command);
  return os.str();
}
std::string Dump(const bench::BenchOptions& o) {
  std::ostringstream os;
  os << Dump(o.farm) << ' ' << o.runs << ' ' << o.farm_seconds << ' ' << o.bound_seconds << ' '
     << o.machine_seconds << ' ' << o.machine_start_s << ' ' << o.start_at << ' ' << o.handoff_seconds << ' '
     << o.writer_positions << ' ' << Ints(o.bound_batches) << ' ' << Ints(o.handoff_batches) << ' '
     << Ints(o.fixed_waits) << ' ' << Ints(o.deflate_levels) << ' ' << Ints(o.scaling_workers) << ' '
     << Ints(o.sweep_batches) << ' ' << Ints(o.handoff_spins_us) << ' ' << o.parts;
  return os.str();
}
std::string Dump(const bench::TuneOptions& o) {
  return Dump(o.farm) + ' ' + std::to_string(o.seconds) + ' ' + o.out + ' ' + std::to_string(o.quick) + ' ' +
         std::to_string(o.plot);
}
std::string Dump(const cli::EvalConfig& e) {
  std::ostringstream os;
  os << e.run << ' ' << Words(e.pons) << ' ' << Words(e.sets) << ' ' << e.limit << ' ' << e.against << ' '
     << e.against_gtp << ' ' << e.games << ' ' << e.opening_plies << ' ' << e.cache_dir << ' '
     << e.positions_csv << ' ' << e.rate_threads << ' ' << e.make_set << ' ' << e.count << ' ' << e.out;
  return os.str();
}

std::string Dump(
    const cli::CommandConfig& c) {  // the own settings of selfplay, export, inspect, check-game, match
  std::ostringstream os;
  os << c.selfplay.games << ' ' << c.selfplay.concurrent << ' ' << c.selfplay.out << " | " << c.exporting.path
     << ' ' << c.exporting.format << ' ' << c.exporting.out << ' ' << c.exporting.limit << " | "
     << c.inspect.path << ' ' << c.inspect.game_id << ' ' << c.inspect.ply << ' ' << c.inspect.games << " | "
     << c.check_game << ' ' << c.check.playouts << ' ' << c.check.seed << ' ' << c.symmetry_samples << " | "
     << c.match.engine << ' ' << c.match.out << ' ' << c.match.games << ' ' << c.match.opening_plies << ' '
     << c.match.openings << ' ' << c.match.move_seconds << ' ' << c.match.komi << ' ' << c.match.engine_stderr
     << ' ' << c.match.max_plies;
  return os.str();
}

// A command that only reads the option table's rows and its own (selfplay,
// export, inspect, check-game, run, gtp): what it reads, the farm's validated.
template <proc::OptionCommand kCommand>
void AddRows(cxxopts::Options& options) {
  if (kCommand != proc::kExport && kCommand != proc::kInspect && kCommand != proc::kCheckGame)
    cli::AddTableOptions(options, kCommand);
  cli::AddCommandOptions(options, kCommand);
}
template <proc::OptionCommand kCommand>
std::string ReadRows(const cxxopts::ParseResult& r) {
  proc::FarmConfig farm = cli::ReadTableOptions(r, kCommand);
  if (kCommand == proc::kRun && farm.out.empty()) farm.out = "runs/run-DATE-TIME";  // as RunCommand does
  if (kCommand == proc::kSelfplay) farm.out = ".";  // its own --out is SelfplayConfig's
  if (kCommand == proc::kRun || kCommand == proc::kSelfplay) farm.Validate();
  cli::CheckTableOptions(farm, kCommand);
  return Dump(farm) + Dump(cli::ReadCommandOptions(r, kCommand));
}

// One command as the tests drive it: its options, the arguments it cannot do
// without, and the settings it hands on, dumped (ConfigError when refused).
struct CommandUnderTest {
  const char* name;
  proc::OptionCommand command;
  void (*add)(cxxopts::Options&);
  std::vector<std::string> required;
  std::string (*settings)(const cxxopts::ParseResult&);
};

const std::vector<CommandUnderTest>& Commands() {
  static const std::vector<CommandUnderTest> commands = {
      {"train",
       proc::kTrain,
       cli::AddTrainOptions,
       {"--run", "/nonexistent/run"},
       [](const cxxopts::ParseResult& r) { return Dump(cli::TrainConfigFrom(r)); }},
      // eval decides by its mode what to do with its settings (EvalCommand): here, what it reads.
      {"eval",
       proc::kEval,
       cli::AddEvalOptions,
       {},
       [](const cxxopts::ParseResult& r) {
         return Dump(cli::ReadCommandOptions(r, proc::kEval).eval) +
                Dump(cli::ReadTableOptions(r, proc::kEval));
       }},
      {"loop",
       proc::kLoop,
       cli::AddLoopOptions,
       {"--out", "/nonexistent/loop"},
       [](const cxxopts::ParseResult& r) { return Dump(cli::LoopConfigFrom(r)); }},
      {"bench",
       proc::kBench,
       cli::AddBenchOptions,
       {},
       [](const cxxopts::ParseResult& r) { return Dump(cli::ReadBenchOptions(r)); }},
      {"tune",
       proc::kTune,
       cli::AddTuneOptions,
       {},
       [](const cxxopts::ParseResult& r) { return Dump(cli::TuneOptionsFrom(r)); }},
      {"run", proc::kRun, AddRows<proc::kRun>, {}, ReadRows<proc::kRun>},
      {"selfplay", proc::kSelfplay, AddRows<proc::kSelfplay>, {}, ReadRows<proc::kSelfplay>},
      {"gtp", proc::kGtp, AddRows<proc::kGtp>, {}, ReadRows<proc::kGtp>},
      {"export", proc::kExport, AddRows<proc::kExport>, {}, ReadRows<proc::kExport>},
      {"inspect", proc::kInspect, AddRows<proc::kInspect>, {}, ReadRows<proc::kInspect>},
      {"check-game", proc::kCheckGame, AddRows<proc::kCheckGame>, {}, ReadRows<proc::kCheckGame>},
      {"match", proc::kMatch, cli::AddMatchOptions, {}, ReadRows<proc::kMatch>},
  };
  return commands;
}

// The settings `c` hands on with `args` after its required ones.
std::string Settings(const CommandUnderTest& c, std::vector<std::string> args) {
  args.insert(args.begin(), c.required.begin(), c.required.end());
  args.insert(args.begin(), "zerofarm-test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  cxxopts::Options options(c.name);
  c.add(options);
  cxxopts::ParseResult r;
  int code = -1;
  REQUIRE(cli::ParseArgs(options, static_cast<int>(argv.size()), argv.data(), &r, &code));
  return c.settings(r);
}

// Every option of the command's --help and the default it prints ("" for none).
std::map<std::string, std::string> HelpDefaults(const CommandUnderTest& c) {
  cxxopts::Options options(c.name);
  c.add(options);
  options.set_width(100000);  // no wrapped help
  options.add_options("help")("h,help", "Print this help");
  std::map<std::string, std::string> text;  // each option's lines, joined
  std::string name;
  std::istringstream is(options.help());
  for (std::string line; std::getline(is, line);) {
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || first < 2) {  // a blank line or a group's title
      name.clear();
    } else if (line[first] == '-') {  // "--name arg  Help" or "-h, --help  Help"
      const size_t at = line.find("--", first);
      name = line.substr(at + 2, line.find_first_of(" =", at) - at - 2);
      text[name] = line.substr(at);
    } else if (!name.empty()) {  // the help on a line of its own, after a long name
      text[name] += " " + line.substr(first);
    }
  }
  std::map<std::string, std::string> found;
  for (const auto& [n, t] : text) {
    const size_t d = t.rfind("(default: ");
    found[n] = d == std::string::npos ? "" : t.substr(d + 10, t.find(')', d) - d - 10);
  }
  found.erase("help");
  return found;
}

// The row of `command` named `name`: the option table's or the command's own.
const proc::OptionSpec* FarmRow(proc::OptionCommand command, const std::string& name) {
  const proc::OptionSpec* o = proc::FindOptionByName(name);
  return o && (o->commands & command) ? o : nullptr;
}
const cli::CommandOption* OwnRow(proc::OptionCommand command, const std::string& name) {
  for (const auto& o : cli::CommandOptionTable())
    if (o.command == command && o.name == name) return &o;
  return nullptr;
}
}  // namespace

TEST_CASE("cli options: every command's help prints its config structs' defaults and uses them",
          "[cli][options]") {
  const cli::CommandConfig defaults;  // the structs' own defaults, field by field
  CHECK(OwnRow(proc::kTrain, "lr")->Default() ==
        proc::ShowOptionValue(learn::TrainConfig{}.optim.learning_rate));
  CHECK(OwnRow(proc::kTrain, "batch")->Default() == std::to_string(learn::TrainConfig{}.batch));
  CHECK(OwnRow(proc::kBench, "bound-batches")->Default() == "1,2,4,8,16,32,64,128,256,512,1024");
  CHECK(OwnRow(proc::kLoop, "eval-every")->Default() ==
        proc::ShowOptionValue(learn::LoopConfig{}.eval_every));
  CHECK(OwnRow(proc::kTune, "seconds")->Default() == proc::ShowOptionValue(bench::TuneOptions{}.seconds));
  CHECK(OwnRow(proc::kEval, "games")->Default() == std::to_string(defaults.eval.games));
  for (const auto& c : Commands()) {
    const auto help = HelpDefaults(c);
    const std::string plain = Settings(c, {});
    for (const auto& [name, printed] : help) {
      INFO(c.name << " --" << name << " (default: " << printed << ")");
      const proc::OptionSpec* farm = FarmRow(c.command, name);
      const cli::CommandOption* own = OwnRow(c.command, name);
      if (name == "config") continue;  // a file of the table's keys ("--config is read first ...")
      REQUIRE((farm == nullptr) != (own == nullptr));  // declared once: in one table, once
      const bool flag =
          farm ? farm->kind == proc::OptionKind::kFlag : own->kind == cli::CommandOptionKind::kFlag;
      if (flag || printed.empty()) {
        CHECK(printed.empty());
        continue;
      }
      CHECK(printed == (farm ? proc::ShowOptionValue(farm->get(proc::FarmConfig{})) : own->get(defaults)));
      // The default given explicitly changes nothing the command hands on.
      CHECK(Settings(c, {"--" + name + "=" + printed}) == plain);
    }
  }
}

TEST_CASE("cli options: every option of every command takes effect or is refused and none is ignored",
          "[cli][options]") {
  // Options whose effect the settings do not show, and where it is checked instead:
  const std::map<std::string, std::string> elsewhere = {
      {"config", "a file of the table's keys: \"--config is read first and the command line wins\""},
      {"train --run", "required (given in every case here); its missing is a usage error (loop_test)"},
      {"loop --out", "required (given in every case here)"},
      {"loop --recipe", "read before the others (LoopCommand): loop_test's recipe cases"},
      {"loop --recipe-changed", "read by LoopCommand: loop_test's recipe cases; refused without --recipe"},
      {"bench --gpus", "-1 and 0 resolve alike on a host without GPUs; > 0 is refused without CUDA"},
      {"bench --manifest-load",
       "another benchmark, run before the parts' options are read: \"bench manifest-load: simulated hosts "
       "...\""},
      {"train --device", "auto and cpu resolve alike on a host without a GPU; cuda is refused there"},
      {"train --cuda-graph", "auto and off resolve alike on the CPU; on is refused there (bad_input_test)"},
      {"train --bf16",
       "--precision bf16, which auto is on CPUs with AMX or AMD's AVX512-BF16 (--precision fp32 shows)"},
  };
  for (const auto& c : Commands()) {
    const std::string plain = Settings(c, {});
    for (const auto& [name, printed] : HelpDefaults(c)) {
      INFO(c.name << " --" << name);
      if (elsewhere.count(name) || elsewhere.count(std::string(c.name) + " --" + name)) continue;
      const proc::OptionSpec* farm = FarmRow(c.command, name);
      const cli::CommandOption* own = OwnRow(c.command, name);
      REQUIRE((farm || own));
      // Values to try, the first one the command takes: a switch alone, else
      // other choices, numbers near the default and at the range's ends, text.
      std::vector<std::vector<std::string>> tries;
      const bool flag =
          farm ? farm->kind == proc::OptionKind::kFlag : own->kind == cli::CommandOptionKind::kFlag;
      if (flag) tries.push_back({"--" + name});
      for (const auto& choice : farm ? farm->choices : own->choices)
        if (choice != printed) tries.push_back({"--" + name + "=" + choice});
      const bool number =
          farm ? farm->kind == proc::OptionKind::kNumber : own->kind == cli::CommandOptionKind::kNumber;
      if (number) {
        const double d = printed == "auto" ? 0 : std::stod(printed), lo = farm ? farm->lo : own->lo,
                     hi = farm ? farm->hi : own->hi;
        for (double v : {d + 1, d * 2, d / 2, d - 1, lo, hi, 1.0, 0.5})
          if (v != d && v >= lo && v <= hi) tries.push_back({"--" + name + "=" + proc::ShowOptionValue(v)});
      }
      // Text: a list of numbers reads as text too (1,2 may be a default: 2 cores).
      if (!flag && !number)
        for (const char* text : {"1,2", "1,3", "x1"}) tries.push_back({"--" + name + "=" + text});
      // Taken: a value changes what the command hands on. Else refused: every
      // value, each in one line that names the option (--fp16 in tune: a CPU command).
      bool took_effect = false, refused = true;
      std::string last_error;
      for (const auto& args : tries) {
        try {
          if (Settings(c, args) != plain) {
            took_effect = true;
            break;
          }
          refused = false;  // neither taken nor refused: ignored
        } catch (const ConfigError& e) {
          last_error = e.what();
          if (last_error.find(name) == std::string::npos || last_error.find('\n') != std::string::npos)
            refused = false;
        }
      }
      INFO("the last refusal: " << last_error);
      CHECK((took_effect || (refused && !tries.empty())));
    }
  }
}

TEST_CASE("cli options: a resumed trainer refuses a net shape other than its models' and never ignores it",
          "[cli][options]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  testing::ScratchDir dir("zf-train-resume");
  const std::string run = dir / "run";
  std::filesystem::create_directories(run + "/models");
  proc::FarmConfig shape;
  shape.blocks = 1;
  shape.filters = 8;
  io::WriteWeights(run + "/models/model-1.h5",
                   eval::RandomWeights(proc::NetConfigFor(*game::MakeGame("connect4"), shape), 1));
  const auto train = [&](std::vector<std::string> args) {  // no shards: --no-wait refuses to wait
    args.insert(args.begin(), {"zerofarm-test", "--run", run, "--no-wait", "--no-status"});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    cxxopts::Options options("train");
    cli::AddTrainOptions(options);
    cxxopts::ParseResult r;
    int code = -1;
    REQUIRE(cli::ParseArgs(options, static_cast<int>(argv.size()), argv.data(), &r, &code));
    return learn::RunTrainer(cli::TrainConfigFrom(r));
  };
  // Taken: past the shape's check to the data, of which there is none.
  CHECK_THROWS_WITH(train({}), Catch::Contains("has 0 positions"));  // no shape given: its models' net
  CHECK_THROWS_WITH(train({"--blocks", "1", "--filters", "8"}), Catch::Contains("has 0 positions"));
  CHECK_THROWS_WITH(train({"--filters", "8"}), Catch::Contains("has 0 positions"));  // --blocks is not given
  // Refused: each option given that is not the models' net, named.
  for (const auto& [args, named] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--blocks", "2", "--filters", "8"}, "--blocks 2: "},
           {{"--filters", "16"}, "--filters 16: "},
           {{"--blocks", "1", "--filters", "8", "--score-head"}, "--score-head: "},
           {{"--blocks", "3", "--value-channels", "4"}, "--blocks 3 --value-channels 4: "}}) {
    INFO(named);
    CHECK_THROWS_WITH(train(args), Catch::StartsWith(named));
    CHECK_THROWS_MATCHES(
        train(args), ConfigError, Catch::Matchers::Predicate<ConfigError>([&](const ConfigError& e) {
          const std::string m = e.what();
          return m.find(": " + run + " trains connect4") != std::string::npos &&
                 m.find("leave the shape out") != std::string::npos && m.find('\n') == std::string::npos;
        }));
  }
}

// Mutation-checked: with RefuseShapeBesideModel (cli/options.cpp) returning at
// once, each command below gets past its options to the missing file.
TEST_CASE("cli options: a random net's shape beside a model file is refused by every command",
          "[cli][options]") {
  testing::ScratchDir dir("zf-shape-beside-model");
  const std::string w = "/nonexistent/w.h5";
  const std::vector<std::pair<int (*)(int, char**), std::vector<std::string>>> commands = {
      {cli::RunCommand, {"--out", dir / "run"}},
      {cli::SelfplayCommand, {"--out", dir / "sp"}},
      {cli::GtpCommand, {}},
      {cli::TrainCommand, {"--run", dir / "train"}},
      {cli::LoopCommand, {"--out", dir / "loop"}},
      {cli::TuneCommand, {"--out", dir / "tune"}},
      {cli::BenchCommand, {}},
  };
  for (const auto& [command, base] : commands) {
    for (const std::vector<std::string>& shape : {std::vector<std::string>{"--blocks", "3"},
                                                  {"--filters", "16"},
                                                  {"--score-head"},
                                                  {"--value-channels", "4"}}) {
      std::vector<std::string> args = base;
      args.insert(args.end(), {"--weights", w});
      args.insert(args.end(), shape.begin(), shape.end());
      const std::string error = CommandError(command, args);
      INFO(args.front() << ' ' << shape[0] << ": " << error);
      CHECK_THAT(error, Catch::StartsWith(shape[0] + " shapes a random net, and --weights " + w));
      CHECK(error.find('\n') == std::string::npos);
    }
  }
  // A config file's value other than the default counts as given; a run's
  // config.txt (every key, the defaults among them) does not.
  std::ofstream(dir / "shape.conf") << "weights = " << w << "\nblocks = 3\n";
  CHECK_THAT(CommandError(cli::RunCommand, {"--config", dir / "shape.conf", "--out", dir / "c"}),
             Catch::StartsWith("--blocks shapes a random net"));
  std::ofstream(dir / "record.conf") << proc::FarmConfig().ToText() << "weights = " << w << "\n";
  CHECK_THAT(CommandError(cli::GtpCommand, {"--config", dir / "record.conf", "--weights", w}),
             Catch::Contains("nonexistent"));
  CHECK_THAT(CommandError(cli::GtpCommand, {"--weights", "random", "--blocks", "1"}),
             !Catch::Contains("shapes a random net"));
}

TEST_CASE("cli options: an option another mode of the command would ignore is refused in one line",
          "[cli][options]") {
  struct Case {
    int (*command)(int, char**);
    std::vector<std::string> args;
    std::string says;  // "" = not refused for this: it fails later, on the missing file
  };
  const std::string w = "/nonexistent/w.h5", p = "/nonexistent/p";
  const std::vector<Case> cases = {
      {cli::EvalCommand, {"--weights", w, "--pons", p, "--games", "3"}, "--games is for an arena"},
      {cli::EvalCommand,
       {"--weights", w, "--pons", p, "--opening-plies", "3"},
       "--opening-plies is for an arena"},
      {cli::EvalCommand, {"--weights", w, "--against", w, "--limit", "3"}, "--limit is for move error"},
      {cli::EvalCommand, {"--weights", w, "--against", w, "--sets", p}, "--sets is for move error"},
      {cli::EvalCommand, {"--weights", w, "--pons", p, "--blocks", "3"}, "--blocks shapes a random net"},
      {cli::EvalCommand, {"--weights", w, "--pons", p, "--seed", "3"}, "--seed seeds a random net"},
      {cli::EvalCommand, {"--weights", w, "--pons", p, "--count", "3"}, "--count is for --make-set"},
      {cli::EvalCommand,
       {"--make-set", "L1_R3", "--out", p, "--simulations", "3"},
       "--simulations is not for"},
      {cli::EvalCommand,
       {"--make-set", "L1_R3", "--out", p, "--weights", w},
       "--weights is not for --make-set"},
      {cli::EvalCommand,
       {"--weights", "random", "--pons", p, "--blocks", "1", "--filters", "8", "--seed", "3"},
       ""},
      {cli::EvalCommand, {"--weights", w, "--against", "random", "--blocks", "1", "--games", "2"}, ""},
      {cli::InspectCommand, {"/nonexistent", "--ply", "3"}, "--ply goes with --game-id"},
      {cli::InspectCommand,
       {"/nonexistent", "--game-id", "5", "--games", "3"},
       "--games lists the shards' games"},
      {cli::InspectCommand, {"/nonexistent", "--game-id", "x5"}, "--game-id: bad value 'x5'"},
      {cli::LoopCommand,
       {"--out", "/nonexistent/loop", "--recipe-changed"},
       "--recipe-changed goes with --recipe"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.begin(), "zerofarm-test");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string error;
    try {
      c.command(static_cast<int>(args.size()), argv.data());
    } catch (const Error& e) {
      error = e.what();
    }
    INFO(args[1] << ' ' << args[2] << ' ' << args.back() << ": " << error);
    if (c.says.empty()) {
      CHECK_THAT(error, Catch::Contains("nonexistent"));  // past the options, to the missing file
    } else {
      CHECK_THAT(error, Catch::StartsWith(c.says));
      CHECK(error.find('\n') == std::string::npos);
    }
  }
}
