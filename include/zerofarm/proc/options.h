#pragma once
// The option table (issue 24): every setting a user can give, declared once.
// One row gives its command-line name, its config-file key, its help, its
// range or choices, the FarmConfig field it sets and the commands that take
// it. From the rows come the cxxopts options of every command (src/cli,
// AddTableOptions), the config-file keys (FarmConfig::FromText/FromFile),
// the range checks (FarmConfig::Validate), the effective config (config.txt,
// FarmConfig::ToText) and the example config (`zerofarm config --example`,
// shipped as docs/config-example.conf).
//
// HOW TO ADD AN OPTION
//   1. Add the field, with its default, to FarmConfig (farm_config.h).
//   2. Append ONE row to the table in src/proc/options.cpp (Table()), in its
//      group: ZF_NUM for a number (a range, lo..hi), ZF_STR for text, ZF_CHOICE
//      for one of a list, ZF_FLAG for a command-line switch that sets a bool
//      key. Name the commands that take it (kRun | kTune ...). Do not write the
//      default into the help: help prints it, once.
//   3. Only checks between options (a needs b) go into FarmConfig::Validate;
//      the row's range is checked for you, with a message naming the option.
//   4. Regenerate the shipped example: `zerofarm config --example >
//      docs/config-example.conf` (the unit test "options: the shipped example
//      config is the generated one" fails until you do).
// Options of one command only that set no FarmConfig field (train's --lr,
// eval's --pons, tune's --seconds ...) are rows of the same shape in
// src/cli/command_options.cpp, bound to the command's config struct.
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "zerofarm/core/error.h"
#include "zerofarm/proc/farm_config.h"

namespace zerofarm::proc {

// The commands an option belongs to (a bit mask).
enum OptionCommand : uint32_t {
  kRun = 1u << 0,
  kSelfplay = 1u << 1,
  kTune = 1u << 2,
  kLoop = 1u << 3,
  kBench = 1u << 4,
  kEval = 1u << 5,
  kTrain = 1u << 6,
  kGtp = 1u << 7,  // zerofarm gtp (and eval --against-gtp reads the same rows through kEval)
  // Commands with no farm option: only their own rows (src/cli/command_options.cpp).
  kExport = 1u << 8,
  kInspect = 1u << 9,
  kCheckGame = 1u << 10,
  kMatch = 1u << 11,  // zerofarm match: gtp's game, search and network rows, and its own
};

enum class OptionKind {
  kNumber,      // an integer or a float field, checked against [lo, hi]
  kText,        // any text (a path, a name)
  kChoice,      // one of `choices`
  kFlag,        // a command-line switch (no value) that stores `flag_value` into a bool key
  kSupervisor,  // set by the supervisor: written to config.txt, ignored in a user's config file
};

struct OptionSpec {
  std::string name;   // command line, without "--"; "" = config file only
  std::string key;    // config-file key; "" = command line only (not in config.txt)
  std::string group;  // help section
  std::string help;   // one sentence; no default (help adds it)
  OptionKind kind = OptionKind::kText;
  double lo = 0, hi = 0;             // kNumber: the valid range
  std::vector<std::string> choices;  // kChoice
  std::string flag_value;            // kFlag: the value the switch stores
  uint32_t commands = 0;             // OptionCommand bits
  std::function<std::string(const FarmConfig&)> get;
  // Parses `value` into the field; throws ConfigError "bad value ..." (the
  // caller prefixes the option's name or the file and line).
  std::function<void(FarmConfig&, const std::string&)> set;
  // kChoice: when set, the choices now, checked by CheckOption only (--game:
  // a plugin loaded after the row was set adds a game). `choices` stays the
  // list of the help and the fingerprint.
  std::function<std::vector<std::string>()> choices_now;

  // The default as text (the field of a default FarmConfig).
  std::string Default() const { return get(FarmConfig{}); }
  // "--name" for messages, or the key for a config-file-only row.
  std::string Display() const { return name.empty() ? key : "--" + name; }
};

// Every row, in help and config.txt order. Built once; never changes.
const std::vector<OptionSpec>& OptionTable();
// The row with this config key ('-' and '_' alike), or nullptr.
const OptionSpec* FindOptionByKey(const std::string& key);
// The row with this command-line name, or nullptr.
const OptionSpec* FindOptionByName(const std::string& name);
// Whether option `name` shapes a random net (--blocks, --filters, --score-head,
// --value-channels): refused beside a model file, which brings its own shape.
bool ShapesRandomNet(const std::string& name);
// Sets the row's field from `value`; a bad value throws ConfigError
// "WHO: bad value 'abc' (an integer)". who: "--workers" or "file:3: workers".
void SetOption(const OptionSpec& o, FarmConfig* c, const std::string& value, const std::string& who);
// ConfigError "--name must be in [lo, hi], got v" when a kNumber or kChoice
// row's field is out of range ("--game: bad value 'x' (one of ...)").
void CheckOption(const OptionSpec& o, const FarmConfig& c);
// A hash (16 hex digits) of every row's name, key, kind, range, choices, flag
// value, commands and default: two binaries with the same fingerprint read the
// same options and config keys alike (proc/binaries.h, the hand-over check).
// Help text is left out: rewording it changes nothing a binary accepts.
std::string OptionTableFingerprint(const std::vector<OptionSpec>& table = OptionTable());
// The candidate nearest to `given` (edit distance, '-' and '_' alike; a prefix
// of exactly one candidate counts as near), or "" when none is near enough to
// be a likely typo. For "did you mean --workers?" messages.
std::string NearestName(const std::string& given, const std::vector<std::string>& candidates);
// " (did you mean PREFIX + nearest?)", or "" when there is none.
std::string DidYouMean(const std::string& given, const std::vector<std::string>& candidates,
                       const std::string& prefix);
// What a value of type T must be, for messages: "an integer", "a number" ...
template <typename T>
const char* OptionValueKind() {
  if constexpr (std::is_same_v<T, bool>)
    return "0 or 1";
  else if constexpr (std::is_floating_point_v<T>)
    return "a number";
  else if constexpr (std::is_unsigned_v<T>)
    return "a non-negative integer";
  else
    return "an integer";
}

// `text` as a T (bool: 0, 1, true, false); ConfigError "bad value 'abc' (an
// integer)" for text that is not one whole T. Shared by every option table.
template <typename T>
T ParseOptionValue(const std::string& text) {
  if constexpr (std::is_same_v<T, bool>) {
    if (text == "1" || text == "true") return true;
    if (text == "0" || text == "false") return false;
  } else {
    std::istringstream is(text);
    T value{};
    is >> value;
    const bool negative_unsigned = std::is_unsigned_v<T> && text.find('-') != std::string::npos;
    if (!text.empty() && !is.fail() && is.eof() && !negative_unsigned) return value;
  }
  throw ConfigError("bad value '" + PrintableText(text) + "' (" + OptionValueKind<T>() + ")");
}

// The shortest text that reads back as the same value (config.txt round trips).
template <typename T>
std::string ShowOptionValue(const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    for (int digits = 6; digits < 18; ++digits) {
      std::ostringstream os;
      os.precision(digits);
      os << v;
      std::istringstream is(os.str());
      T back{};
      is >> back;
      if (back == v) return os.str();
    }
  }
  std::ostringstream os;
  os << v;
  return os.str();
}

// A config file with every key, its help and its default, commented out: what
// `zerofarm config --example` prints and docs/config-example.conf holds.
std::string ExampleConfig();

}  // namespace zerofarm::proc
