// Loop recipes (learn/recipe.h): a small line-based format, parsed here and
// turned into the loop's own options and per-stage child arguments.
#include "zerofarm/learn/recipe.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "zerofarm/core/error.h"

namespace zerofarm::learn {
namespace {

constexpr long kMaxRecipeBytes = 64 * 1024;

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// The line without its comment: '#' at the start or after a blank.
std::string StripComment(const std::string& line) {
  for (size_t i = 0; i < line.size(); ++i)
    if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) return line.substr(0, i);
  return line;
}

// "[stage from 210000 steps]", "[stage from 4.2 cpu-hours]" or both joined by
// "or" (whichever comes first); ConfigError otherwise.
RecipeStage StageHeader(const std::string& header, const std::string& where) {
  std::istringstream in(header.substr(1, header.size() - 2));
  std::string stage, from;
  RecipeStage s;
  bool ok = (in >> stage >> from) && stage == "stage" && from == "from";
  for (int clocks = 0; ok; ++clocks) {
    double at = -1;
    std::string unit, joint;
    ok = (clocks == 0 || ((in >> joint) && joint == "or")) && (in >> at >> unit) && std::isfinite(at) &&
         at >= 0;
    double* slot = unit == "steps" ? &s.from_steps : unit == "cpu-hours" ? &s.from_cpu_hours : nullptr;
    ok = ok && slot && *slot == RecipeStage::kNever;  // each clock once
    if (ok) *slot = at;
    if (ok && !(in >> std::ws).good()) break;  // no more words
  }
  if (!ok)
    throw ConfigError(
        where +
        ": a stage header reads [stage from N steps], [stage from H cpu-hours] or [stage from N "
        "steps or H cpu-hours], N, H >= 0, not " +
        header);
  return s;
}

// ConfigError unless `next` names the clocks `prev` names and starts later on each.
void CheckStageOrder(const RecipeStage& prev, const RecipeStage& next, const std::string& where) {
  const auto named = [](double from) { return from != RecipeStage::kNever; };
  if (named(prev.from_steps) != named(next.from_steps) ||
      named(prev.from_cpu_hours) != named(next.from_cpu_hours))
    throw ConfigError(where +
                      ": every stage of a recipe starts on the same clocks (steps, cpu-hours or both)");
  if (!(next.from_steps > prev.from_steps || !named(next.from_steps)) ||
      !(next.from_cpu_hours > prev.from_cpu_hours || !named(next.from_cpu_hours)))
    throw ConfigError(where + ": stages must start at increasing points");
}

// A key (and value) inside a stage: run-args or train-args only.
void AddToStage(RecipeStage* stage, const std::string& key, const std::string& value,
                const std::string& where) {
  std::vector<std::string>* args = key == "run-args"     ? &stage->run_args
                                   : key == "train-args" ? &stage->train_args
                                                         : nullptr;
  if (!args)
    throw ConfigError(
        where + ": a stage sets only run-args and train-args (farm and trainer options), not '" + key + "'");
  const std::vector<std::string> words = SplitWords(value);
  args->insert(args->end(), words.begin(), words.end());
}

}  // namespace

namespace {

// "from 210000 steps or 6 <hours_unit>": the points a stage starts at, every digit.
std::string StartText(const RecipeStage& s, const char* hours_unit) {
  std::ostringstream out;
  out.precision(15);  // 1234567 steps, not 1.23457e+06: a change in the 7th digit is a change
  out << "from";
  if (s.from_steps != RecipeStage::kNever) out << ' ' << s.from_steps << " steps";
  if (s.from_steps != RecipeStage::kNever && s.from_cpu_hours != RecipeStage::kNever) out << " or";
  if (s.from_cpu_hours != RecipeStage::kNever) out << ' ' << s.from_cpu_hours << ' ' << hours_unit;
  return out.str();
}

}  // namespace

std::string RecipeStage::When() const { return StartText(*this, "cpu-hours"); }

std::string RecipeStage::Describe() const {
  std::ostringstream out;
  out << StartText(*this, "CPU hours") << ':';
  for (const auto& w : run_args) out << (&w == &run_args.front() ? " run-args " : " ") << w;
  if (!run_args.empty() && !train_args.empty()) out << ";";
  for (const auto& w : train_args) out << (&w == &train_args.front() ? " train-args " : " ") << w;
  return out.str();
}

Recipe ParseRecipe(const std::string& text, const std::string& source) {
  Recipe recipe;
  recipe.source = source;
  recipe.text = text;
  std::istringstream in(text);
  int number = 0;
  std::string stage_header;  // "[stage from N steps] " inside a stage (When(), normalised)
  for (std::string raw; std::getline(in, raw);) {
    const std::string where = "recipe " + source + " line " + std::to_string(++number);
    const std::string line = Trim(StripComment(raw));
    if (line.empty()) continue;
    if (line.front() == '[' && line.back() == ']') {
      const RecipeStage stage = StageHeader(line, where);
      if (!recipe.stages.empty()) CheckStageOrder(recipe.stages.back(), stage, where);
      recipe.stages.push_back(stage);
      stage_header = "[stage " + stage.When() + "] ";  // normalised: blanks inside the brackets do not count
      continue;
    }
    const size_t eq = line.find('=');
    const std::string key = Trim(line.substr(0, eq));
    if (key.empty() || key.find_first_of(" \t") != std::string::npos || key[0] == '-')
      throw ConfigError(where + ": expected `key = value`, a bare `key`, or [stage from H cpu-hours]");
    const std::string value = eq == std::string::npos ? "" : Trim(line.substr(eq + 1));
    recipe.settings.push_back(stage_header + (eq == std::string::npos ? key : key + " = " + value));
    if (!recipe.stages.empty()) {
      AddToStage(&recipe.stages.back(), key, value, where);
      continue;
    }
    recipe.loop_args.push_back("--" + key);
    if (eq != std::string::npos) recipe.loop_args.push_back(value);
  }
  return recipe;
}

Recipe ReadRecipe(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw ConfigError("recipe " + path + ": no such file");
  if (!S_ISREG(st.st_mode)) throw ConfigError("recipe " + path + ": not a regular file");
  if (st.st_size > kMaxRecipeBytes)
    throw ConfigError("recipe " + path + ": " + std::to_string(st.st_size) + " bytes; a recipe has at most " +
                      std::to_string(kMaxRecipeBytes));
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<size_t>(st.st_size), '\0');
  if (!in || !in.read(&text[0], st.st_size)) throw ConfigError("recipe " + path + ": cannot be read");
  return ParseRecipe(text, path);
}

namespace {

std::string JoinItems(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& i : items) joined += (joined.empty() ? "" : "; ") + i;
  return joined.empty() ? "nothing" : joined;
}

}  // namespace

std::vector<std::string> WithRecipeArgs(const Recipe& recipe, const std::vector<std::string>& argv) {
  std::vector<std::string> base = recipe.loop_args;  // "--key" words, each but a flag's followed by its value
  std::vector<std::string> line;
  for (size_t i = 1; i < argv.size(); ++i) {
    bool joined = false;
    for (const std::string key : {"--run-args", "--train-args"}) {
      const auto ours = std::find(base.begin(), base.end(), key);
      if (ours == base.end() || ours + 1 == base.end()) continue;  // the recipe has none: as given
      if (argv[i] == key && i + 1 < argv.size()) {
        *(ours + 1) += " " + argv[++i];
        joined = true;
      } else if (argv[i].compare(0, key.size() + 1, key + "=") == 0) {
        *(ours + 1) += " " + argv[i].substr(key.size() + 1);
        joined = true;
      }
    }
    if (!joined) line.push_back(argv[i]);
  }
  std::vector<std::string> out(argv.begin(), argv.begin() + (argv.empty() ? 0 : 1));
  out.insert(out.end(), base.begin(), base.end());
  out.insert(out.end(), line.begin(), line.end());
  return out;
}

std::string RecipeDifference(const Recipe& kept, const Recipe& now) {
  const std::vector<std::string>& a = kept.settings;
  const std::vector<std::string>& b = now.settings;
  if (a == b) return "";
  std::vector<std::string> dropped, added;
  for (const std::string& i : a)
    if (std::find(b.begin(), b.end(), i) == b.end()) dropped.push_back(i);
  for (const std::string& i : b)
    if (std::find(a.begin(), a.end(), i) == a.end()) added.push_back(i);
  if (dropped.empty() && added.empty()) return "the same settings in another order";
  return "it had " + JoinItems(dropped) + ", this one has " + JoinItems(added);
}

std::string RecipePath(const std::string& name_or_file, const std::string& data_dir) {
  const std::string suffix = ".recipe";
  const bool is_file =
      name_or_file.find('/') != std::string::npos ||
      (name_or_file.size() > suffix.size() &&
       name_or_file.compare(name_or_file.size() - suffix.size(), suffix.size(), suffix) == 0);
  return is_file ? name_or_file : data_dir + "/recipes/" + name_or_file + suffix;
}

bool RecipeStage::StartedAt(const RunProgress& at) const {
  return (from_steps != kNever && static_cast<double>(at.steps) >= from_steps) ||
         (from_cpu_hours != kNever && at.cpu_hours >= from_cpu_hours);
}

std::vector<std::string> SplitWords(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

size_t StagesStarted(const std::vector<RecipeStage>& stages, const RunProgress& at) {
  size_t n = 0;
  while (n < stages.size() && stages[n].StartedAt(at)) ++n;
  return n;
}

}  // namespace zerofarm::learn
