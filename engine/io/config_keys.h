// The keys of the search config, each declared once (engine/io/config_keys.cpp): its dotted path,
// default, accepted values and help text, and how it is read from YAML, written back and reset.
// Everything else derives from that one table: SearchConfig's defaults, the loader
// (engine/io/config.cpp), --print-config, the README table (configKeysMarkdown(), checked by
// tests/io/config_keys_test.cpp) and the check of configs/default.yaml (the same test).
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace YAML {
class Node;
class Emitter;
}  // namespace YAML

namespace mlsys {

struct SearchConfig;

// One thing wrong in a config: the key's dotted path, what is wrong, and the 0-based line of the
// YAML node (-1: none, e.g. a rule over several keys).
struct ConfigIssue {
  int line = -1;
  std::string key;
  std::string why;
};
using ConfigIssues = std::vector<ConfigIssue>;

struct ConfigKey {
  std::string path;     // "search.seconds": section "search", name "seconds"; a map of weights: "sa.moves"
  std::string def;      // the default as YAML text, as configs/default.yaml writes it
  std::string range;    // the accepted values, for the docs ("[0, 1]", "`true`, `false`")
  std::string help;     // what the key does (the README table)
  bool is_map = false;  // a map (sa.moves): its entries are keys path.<name>, each optional
  std::function<void(SearchConfig&)> reset;  // sets the default
  // Checks `value` and stores it; or appends one issue per fault (naming `path`, or path.<name>).
  std::function<void(SearchConfig&, const YAML::Node& value, ConfigIssues&)> read;
  std::function<void(YAML::Emitter&, const SearchConfig&)> write;  // the value (after YAML::Value)

  std::string section() const { return path.substr(0, path.find('.')); }
  std::string name() const { return path.substr(path.find('.') + 1); }
};

// Every key, in the order --print-config writes them (a section's keys together).
const std::vector<ConfigKey>& configKeys();
const ConfigKey* findConfigKey(std::string_view path);              // nullptr: no such key
std::vector<std::string> configSections();                          // "search", "sa", ..., in that order
std::vector<std::string> configKeyNames(std::string_view section);  // "t0", "t1", ...

// The keys whose value in `cfg` differs from the built-in default, as (dotted path, value as
// flow-style YAML), in configKeys() order: what a run's start line and --stats name so that the
// run can be repeated (a map such as sa.moves is one entry).
std::vector<std::pair<std::string, std::string>> nonDefaultKeys(const SearchConfig& cfg);

// The README's table of the keys (Markdown: a header row, a rule, one row a key).
std::string configKeysMarkdown();

// Calls each(name, value) for every pair of mapping `m` (named `where`: "" at the top level)
// whose key is one of `known` and not a repeat; appends an issue for a non-mapping, a key that
// is not a plain name, an unknown key (listing `known`) and a repeated key (yaml-cpp keeps every
// pair of a repeated key, but m["key"] returns the first).
void forEachKnownKey(const YAML::Node& m, const std::string& where, const std::vector<std::string>& known,
                     ConfigIssues& out, const std::function<void(const std::string&, const YAML::Node&)>& each);

}  // namespace mlsys
