// How a key is read, written and documented, by the kind of its value; the table itself is in
// config_table.cpp.
#include "engine/io/config_keys.h"

#include <charconv>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "cost/model/json_util.h"
#include "engine/base/worker_kind.h"
#include "engine/io/config.h"
#include "engine/io/config_kinds.h"
#include "moves/move.h"

namespace mlsys::config_kinds {
namespace {

void add(ConfigIssues& out, const YAML::Node& n, const std::string& key, std::string why) {
  out.push_back({n.Mark().line, key, std::move(why)});
}

std::string joined(const std::vector<std::string>& names, const char* sep, const char* quote = "") {
  std::string s;
  for (const std::string& x : names) s += (s.empty() ? "" : sep) + (quote + x + quote);
  return s;
}

std::vector<std::string> workerNames() {  // "beam", "sa", "lns"
  std::vector<std::string> names;
  for (WorkerKind k : kWorkerKinds) names.emplace_back(workerKindName(k));
  return names;
}

}  // namespace

bool readReal(const YAML::Node& n, const std::string& key, double lo, double hi, double& v, ConfigIssues& out) {
  double x;
  try {
    x = n.as<double>();
  } catch (const YAML::Exception&) {
    add(out, n, key,
        n.IsScalar() ? fmt::format("expected a number, got \"{}\"", n.Scalar())
                     : "expected a number, got a non-scalar");
    return false;
  }
  if (!(x >= lo && x <= hi)) {
    add(out, n, key,
        "value " + formatDouble(x) + " is out of range [" + formatDouble(lo) + ", " + formatDouble(hi) + "]");
    return false;
  }
  v = x;
  return true;
}

// Integer keys take decimal integer literals only: "2.7" used to be truncated to 2 silently.
template <class T>
bool readInteger(const YAML::Node& n, const std::string& key, T lo, T hi, T& v, ConfigIssues& out) {
  if (!n.IsScalar()) {
    add(out, n, key, "expected an integer, got a non-scalar");
    return false;
  }
  const std::string& s = n.Scalar();
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && *b == '+' && b + 1 != e && b[1] != '-') ++b;  // from_chars takes '-' but not '+'
  T x = 0;
  auto r = std::from_chars(b, e, x);
  if constexpr (std::is_unsigned_v<T>) {
    long long sv;  // "-3" is an integer, out of range of an unsigned key
    if (auto rs = std::from_chars(b, e, sv);
        r.ec == std::errc::invalid_argument && rs.ec != std::errc::invalid_argument && rs.ptr == e)
      r = {e, std::errc::result_out_of_range};
  }
  if (r.ec == std::errc::invalid_argument || r.ptr != e) {
    add(out, n, key, "expected an integer, got \"" + s + "\"");
    return false;
  }
  if (r.ec == std::errc::result_out_of_range || x < lo || x > hi) {
    add(out, n, key, "value " + s + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return false;
  }
  v = x;
  return true;
}
template bool readInteger<long>(const YAML::Node&, const std::string&, long, long, long&, ConfigIssues&);
template bool readInteger<uint64_t>(const YAML::Node&, const std::string&, uint64_t, uint64_t, uint64_t&,
                                    ConfigIssues&);

bool readBool(const YAML::Node& n, const std::string& key, bool& v, ConfigIssues& out) {
  if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false")) {
    add(out, n, key, "expected true or false");
    return false;
  }
  v = n.Scalar() == "true";
  return true;
}

bool readName(const YAML::Node& n, const std::string& key, const std::vector<std::string>& names, size_t& index,
              ConfigIssues& out) {
  if (!n.IsScalar()) {
    add(out, n, key, "expected a scalar value");
    return false;
  }
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == n.Scalar()) {
      index = i;
      return true;
    }
  add(out, n, key, "unknown value \"" + n.Scalar() + "\" (expected " + joined(names, " or ") + ")");
  return false;
}

bool readWorkers(const YAML::Node& n, const std::string& key, std::vector<WorkerKind>& v, ConfigIssues& out) {
  const std::string known = joined(workerNames(), ", ");
  if (!n.IsSequence() || n.size() == 0) {
    add(out, n, key, "expected a non-empty list of worker kinds (" + known + ")");
    return false;
  }
  std::vector<WorkerKind> kinds;
  const size_t before = out.size();
  for (const auto& x : n) {
    if (!x.IsScalar()) {
      add(out, x, key, "expected a worker kind (" + known + "), got a non-scalar");
    } else if (std::optional<WorkerKind> kind = parseWorkerKind(x.Scalar())) {
      kinds.push_back(*kind);
    } else {
      add(out, x, key, "unknown worker kind \"" + x.Scalar() + "\" (known: " + known + ")");
    }
  }
  if (out.size() != before) return false;
  v = std::move(kinds);
  return true;
}

// A map of move weights (sa.moves, lns.moves) over `w`: every key a move, every value in [0, 1e6].
bool readWeights(const YAML::Node& n, const std::string& key, std::map<std::string, double>& w, ConfigIssues& out) {
  const size_t before = out.size();
  forEachKnownKey(n, key, moveNames(), out,
                  [&](const std::string& k, const YAML::Node& v) { readReal(v, key + "." + k, 0, 1e6, w[k], out); });
  return out.size() == before;
}

std::string rangeText(double lo, double hi) { return fmt::format("[{}, {}]", formatDouble(lo), formatDouble(hi)); }

std::string namesText(const std::vector<std::string>& names) { return joined(names, ", ", "`"); }

std::string workersRangeText() { return "a non-empty list of " + namesText(workerNames()); }

void writeWeights(YAML::Emitter& e, const std::map<std::string, double>& w) {
  e << YAML::BeginMap;
  for (const auto& [k, x] : w) e << YAML::Key << k << YAML::Value << formatDouble(x);
  e << YAML::EndMap;
}

void writeWorkers(YAML::Emitter& e, const std::vector<WorkerKind>& w) {
  e << YAML::Flow << YAML::BeginSeq;
  for (WorkerKind k : w) e << workerKindName(k);
  e << YAML::EndSeq;
}

YAML::Node parseDefault(const std::string& path, const std::string& def) {
  try {
    return YAML::Load(def);
  } catch (const YAML::Exception& e) {
    throw std::logic_error("config key " + path + ": the default \"" + def + "\" is not YAML: " + e.msg);
  }
}

[[noreturn]] void badDefault(const std::string& path, const std::string& def, const ConfigIssues& why) {
  throw std::logic_error("config key " + path + ": the default \"" + def + "\" is not a valid value" +
                         (why.empty() ? "" : ": " + why.front().why));
}

}  // namespace mlsys::config_kinds

namespace mlsys {

void forEachKnownKey(const YAML::Node& m, const std::string& where, const std::vector<std::string>& known,
                     ConfigIssues& out, const std::function<void(const std::string&, const YAML::Node&)>& each) {
  const std::string here = where.empty() ? "(top level)" : where;
  if (!m.IsMap()) {
    out.push_back({m.Mark().line, here, "expected a mapping"});
    return;
  }
  std::map<std::string, int> seen;  // key -> line (1-based) of its first occurrence
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!it->first.IsScalar()) {
      out.push_back({it->first.Mark().line, here, "keys must be plain names"});
      continue;
    }
    const std::string& k = it->first.Scalar();
    const std::string full = (where.empty() ? "" : where + ".") + k;
    bool ok = false;
    for (const auto& x : known) ok |= x == k;
    if (!ok) {
      out.push_back({it->first.Mark().line, full, "unknown key (known: " + config_kinds::joined(known, ", ") + ")"});
      continue;
    }
    auto [first, fresh] = seen.emplace(k, it->first.Mark().line + 1);
    if (!fresh) {
      out.push_back(
          {it->first.Mark().line, full, "duplicate key (first at line " + std::to_string(first->second) + ")"});
      continue;
    }
    each(k, it->second);
  }
}

const ConfigKey* findConfigKey(std::string_view path) {
  for (const ConfigKey& k : configKeys())
    if (k.path == path) return &k;
  return nullptr;
}

std::vector<std::string> configSections() {
  std::vector<std::string> s;
  for (const ConfigKey& k : configKeys())
    if (s.empty() || s.back() != k.section()) s.push_back(k.section());
  return s;
}

std::vector<std::string> configKeyNames(std::string_view section) {
  std::vector<std::string> names;
  for (const ConfigKey& k : configKeys())
    if (k.section() == section) names.push_back(k.name());
  return names;
}

std::vector<std::pair<std::string, std::string>> nonDefaultKeys(const SearchConfig& cfg) {
  SearchConfig def;
  for (const ConfigKey& k : configKeys()) k.reset(def);
  auto text = [](const ConfigKey& k, const SearchConfig& c) {
    YAML::Emitter e;
    e.SetMapFormat(YAML::Flow);
    e.SetSeqFormat(YAML::Flow);
    k.write(e, c);
    return std::string(e.c_str());
  };
  std::vector<std::pair<std::string, std::string>> out;
  for (const ConfigKey& k : configKeys())
    if (std::string v = text(k, cfg); v != text(k, def)) out.emplace_back(k.path, std::move(v));
  return out;
}

std::string configKeysMarkdown() {
  auto cell = [](const std::string& s) {  // a '|' would end the cell
    std::string out;
    for (char c : s) {
      if (c == '|') out += '\\';
      out += c;
    }
    return out;
  };
  std::string md = "| key | default | values | meaning |\n|---|---|---|---|\n";
  for (const ConfigKey& k : configKeys())
    md += "| `" + k.path + (k.is_map ? ".<name>" : "") + "` | `" + k.def + "` | " + cell(k.range) + " | " +
          cell(k.help) + " |\n";
  return md;
}

}  // namespace mlsys
