#include "engine/io/config.h"

#include <set>
#include <utility>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "cost/model/json_util.h"
#include "cost/model/types.h"
#include "engine/base/limits.h"
#include "engine/io/config_keys.h"

namespace mlsys {
namespace {

// At most this many errors are listed (a hostile file could hold a million unknown keys).
constexpr size_t kMaxListedErrors = 50;

// The errors of one load, each a line "NAME: [line N: ]KEY: WHY", NAME the file or the --set
// argument; thrown together at the end.
struct Errors {
  std::vector<std::string> lines;
  std::set<std::pair<std::string, std::string>> seen;  // (key, why) already reported

  // Adds the issues not reported before (a --set is checked on the whole tree, file included).
  void add(const std::string& name, bool with_lines, const ConfigIssues& issues) {
    for (const ConfigIssue& i : issues) {
      if (!seen.emplace(i.key, i.why).second) continue;
      std::string where = with_lines && i.line >= 0 ? "line " + std::to_string(i.line + 1) + ": " : "";
      // Each piece cut to 200 bytes: a 40 KB --set value is not echoed whole.
      lines.push_back(printable(name) + ": " + where + printable(i.key) + ": " + printable(i.why));
    }
  }
  void throwAny() const {
    if (lines.empty()) return;
    if (lines.size() == 1) throw InputError(lines.front());
    std::string m = std::to_string(lines.size()) + " errors in the config:";
    for (size_t i = 0; i < lines.size() && i < kMaxListedErrors; ++i) m += "\n  " + lines[i];
    if (lines.size() > kMaxListedErrors) m += "\n  (and " + std::to_string(lines.size() - kMaxListedErrors) + " more)";
    throw InputError(m);
  }
};

YAML::Node parseYaml(const std::string& yaml, const std::string& name) {
  try {
    return YAML::Load(yaml);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard (its message is "bad file").
    throw InputError(name + ": line " + std::to_string(e.mark.line + 1) +
                     ": not valid YAML: nested too deeply for the YAML parser (a config needs 4 levels)");
  } catch (const YAML::Exception& e) {
    throw InputError(name + ": line " + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
}

bool hasIssueUnder(const ConfigIssues& issues, size_t from, const std::vector<std::string>& keys) {
  for (size_t i = from; i < issues.size(); ++i)
    for (const std::string& k : keys)
      if (issues[i].key == k || issues[i].key.starts_with(k + ".")) return true;
  return false;
}

// The rules over several keys, checked only where the keys themselves are fine (`from`: the
// first issue of this tree).
void checkRules(const SearchConfig& cfg, const YAML::Node& root, ConfigIssues& out, size_t from) {
  if (const YAML::Node lns = root.IsMap() ? root["lns"] : YAML::Node();
      lns && lns.IsMap() && !hasIssueUnder(out, from, {"lns.window_ops_min", "lns.window_ops_max"}) &&
      cfg.lns_window_ops_min > cfg.lns_window_ops_max)
    out.push_back({lns.Mark().line, "lns.window_ops_min",
                   "must not exceed lns.window_ops_max (" + std::to_string(cfg.lns_window_ops_max) + ")"});
  auto sum = [](const std::map<std::string, double>& w) {
    double t = 0;
    for (const auto& [k, v] : w) t += v;
    return t;
  };
  if (hasIssueUnder(out, from, {"sa.moves"})) return;
  if (sum(cfg.annealWeights(false)) <= 0) out.push_back({-1, "sa.moves", "all move weights are zero"});
  else if (!hasIssueUnder(out, from, {"lns.moves"}) && sum(cfg.annealWeights(true)) <= 0)
    out.push_back({-1, "lns.moves", "all move weights of the LNS workers' annealing are zero (over sa.moves)"});
}

// The config a YAML tree describes, over the defaults; every key and value checked, each fault
// appended to `out`. (A const tree: yaml-cpp's non-const operator[] would turn a null node into a
// map.)
SearchConfig fromTree(const YAML::Node& root, ConfigIssues& out) {
  SearchConfig cfg;
  if (root.IsNull()) return cfg;
  const size_t from = out.size();
  forEachKnownKey(root, "", configSections(), out, [&](const std::string& section, const YAML::Node& body) {
    forEachKnownKey(body, section, configKeyNames(section), out, [&](const std::string& name, const YAML::Node& v) {
      findConfigKey(section + "." + name)->read(cfg, v, out);
    });
  });
  checkRules(cfg, root, out, from);
  return cfg;
}

// One --set argument, "KEY=VALUE": KEY a dotted path, VALUE a YAML value (parsed when applied).
struct Override {
  std::string arg, key, text;
  std::vector<std::string> path;
};

Override parseOverride(const std::string& kv) {
  const size_t eq = kv.find('=');
  if (eq == std::string::npos)
    throw ConfigOverrideSyntaxError("--set " + printable(kv) + ": expected KEY=VALUE (e.g. --set sa.t0=0.001)");
  Override o{kv, kv.substr(0, eq), kv.substr(eq + 1), {}};
  for (size_t b = 0;;) {
    size_t dot = o.key.find('.', b);
    o.path.push_back(o.key.substr(b, dot == std::string::npos ? std::string::npos : dot - b));
    if (o.path.back().empty())
      throw ConfigOverrideSyntaxError("--set " + printable(kv) + ": '" + printable(o.key) +
                                      "' is not a key (e.g. sa.t0)");
    if (dot == std::string::npos) break;
    b = dot + 1;
  }
  return o;
}

// Sets the override's key in the tree (sections are created as needed); false, and an issue in
// `out`, when its value is not YAML or a section on its path is a value.
bool applyOverride(YAML::Node& root, const Override& o, ConfigIssues& out) {
  YAML::Node value(o.text);  // "" stays an empty string, not null
  try {
    if (!o.text.empty()) value = YAML::Load(o.text);
  } catch (const YAML::Exception& e) {
    out.push_back({-1, o.key, "not a valid YAML value: " + e.msg});
    return false;
  }
  // First the check (read only: a const tree), then the change.
  YAML::Node at = root.IsMap() ? root : YAML::Node(YAML::NodeType::Map);
  std::string prefix;
  for (size_t i = 0; i + 1 < o.path.size(); ++i) {
    prefix += (i ? "." : "") + o.path[i];
    const YAML::Node next = static_cast<const YAML::Node&>(at)[o.path[i]];
    if (!next.IsDefined() || next.IsNull()) break;
    if (!next.IsMap()) {
      out.push_back({-1, o.key, "unknown key (" + prefix + " is not a section)"});
      return false;
    }
    at.reset(next);
  }
  if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
  at.reset(root);
  for (size_t i = 0; i + 1 < o.path.size(); ++i) {
    YAML::Node next = at[o.path[i]];
    if (!next.IsDefined() || next.IsNull()) next = YAML::Node(YAML::NodeType::Map);
    at.reset(next);
  }
  at[o.path.back()] = value;
  return true;
}

}  // namespace

SearchConfig::SearchConfig() {
  for (const ConfigKey& k : configKeys()) k.reset(*this);
}

SearchConfig loadConfigText(const std::string& yaml, const std::string& name) {
  ConfigIssues issues;
  SearchConfig cfg = fromTree(parseYaml(yaml, name), issues);
  Errors errors;
  errors.add(name, true, issues);
  errors.throwAny();
  return cfg;
}

SearchConfig loadConfig(const std::string& path, const std::vector<std::string>& overrides) {
  const std::string name = "config '" + path + "'";
  // A config is small: 16 MiB at most (a FIFO is waited for 10 s at most).
  ReadLimits lim;
  lim.max_bytes = 16 * 1024 * 1024;
  lim.raise_hint = "a config is at most 16 MiB";
  YAML::Node root = path.empty() ? YAML::Node() : parseYaml(readTextFile(path, "config", lim), name);
  std::vector<Override> sets;
  for (const std::string& kv : overrides) sets.push_back(parseOverride(kv));
  Errors errors;
  ConfigIssues issues;
  SearchConfig cfg = fromTree(root, issues);
  errors.add(name, true, issues);
  // Each override is checked on the whole tree as it then stands, so an error names the --set
  // argument that caused it (what the file or an earlier --set caused is not repeated).
  for (const Override& o : sets) {
    issues.clear();
    if (applyOverride(root, o, issues)) cfg = fromTree(root, issues);
    errors.add("--set " + o.arg, false, issues);
  }
  errors.throwAny();
  return cfg;
}

std::string configToYaml(const SearchConfig& c) {
  // yaml-cpp's emitter does the layout and any quoting; numbers are written as formatDouble
  // writes them (the shortest decimal that reads back as the same double).
  YAML::Emitter e;
  e << YAML::BeginMap;
  std::string section;
  for (const ConfigKey& k : configKeys()) {
    if (k.section() != section) {
      if (!section.empty()) e << YAML::EndMap;
      section = k.section();
      e << YAML::Key << section << YAML::Value << YAML::BeginMap;
    }
    e << YAML::Key << k.name() << YAML::Value;
    k.write(e, c);
  }
  e << YAML::EndMap << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace mlsys
