// The kinds of config value (a number, an integer, true/false, a name, the worker list, a map of
// move weights): one function a kind that makes a ConfigKey from a field of SearchConfig (a
// pointer to member, or a function returning the field, for fields inside `model`). Used by
// config_table.cpp; the readers and writers are in config_keys.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "cost/model/json_util.h"
#include "engine/base/worker_kind.h"
#include "engine/io/config.h"
#include "engine/io/config_keys.h"

namespace mlsys::config_kinds {

// Each reader checks `n` and on success stores it in `v` (a map: merges into it); otherwise it
// leaves `v` and appends the faults, naming `key`.
bool readReal(const YAML::Node& n, const std::string& key, double lo, double hi, double& v, ConfigIssues& out);
template <class T>
bool readInteger(const YAML::Node& n, const std::string& key, T lo, T hi, T& v, ConfigIssues& out);
bool readBool(const YAML::Node& n, const std::string& key, bool& v, ConfigIssues& out);
bool readName(const YAML::Node& n, const std::string& key, const std::vector<std::string>& names, size_t& index,
              ConfigIssues& out);
bool readWorkers(const YAML::Node& n, const std::string& key, std::vector<WorkerKind>& v, ConfigIssues& out);
bool readWeights(const YAML::Node& n, const std::string& key, std::map<std::string, double>& w, ConfigIssues& out);
void writeWorkers(YAML::Emitter& e, const std::vector<WorkerKind>& w);
void writeWeights(YAML::Emitter& e, const std::map<std::string, double>& w);
std::string rangeText(double lo, double hi);                   // "[0, 1]"
std::string namesText(const std::vector<std::string>& names);  // "`sa`, `lns`"
std::string workersRangeText();
YAML::Node parseDefault(const std::string& path, const std::string& def);
[[noreturn]] void badDefault(const std::string& path, const std::string& def, const ConfigIssues& why);

template <class F>
using FieldOf = std::remove_cvref_t<std::invoke_result_t<F, SearchConfig&>>;

// The key `path` of field `field`, its default `def` (YAML text, read by `read` once, here),
// read by `read(node, path, value, issues)` and written by `write(emitter, value)`.
template <class F, class Read, class Write>
ConfigKey makeKey(std::string path, F field, std::string def, std::string range, std::string help, Read read,
                  Write write) {
  using T = FieldOf<F>;
  T dv{};
  ConfigIssues bad;
  if (!read(parseDefault(path, def), path, dv, bad) || !bad.empty()) badDefault(path, def, bad);
  ConfigKey k;
  k.path = path;
  k.def = std::move(def);
  k.range = std::move(range);
  k.help = std::move(help);
  k.reset = [field, dv](SearchConfig& c) { std::invoke(field, c) = dv; };
  k.read = [field, read, path](SearchConfig& c, const YAML::Node& n, ConfigIssues& out) {
    T v = std::invoke(field, c);
    if (read(n, path, v, out)) std::invoke(field, c) = std::move(v);
  };
  k.write = [field, write](YAML::Emitter& e, const SearchConfig& c) {
    write(e, std::invoke(field, const_cast<SearchConfig&>(c)));
  };
  return k;
}

// A number in [lo, hi], written in the shortest form that reads back the same.
template <class F>
ConfigKey real(std::string path, F field, std::string def, double lo, double hi, std::string help) {
  auto read = [lo, hi](const YAML::Node& n, const std::string& key, double& v, ConfigIssues& out) {
    return readReal(n, key, lo, hi, v, out);
  };
  auto write = [](YAML::Emitter& e, double v) { e << formatDouble(v); };
  return makeKey(std::move(path), field, std::move(def), rangeText(lo, hi), std::move(help), read, write);
}

// A number in [lo, hi] or `auto`, held as -1.
template <class F>
ConfigKey realOrAuto(std::string path, F field, std::string def, double lo, double hi, std::string help) {
  auto read = [lo, hi](const YAML::Node& n, const std::string& key, double& v, ConfigIssues& out) {
    if (n.IsScalar() && n.Scalar() == "auto") {
      v = -1;
      return true;
    }
    return readReal(n, key, lo, hi, v, out);
  };
  auto write = [](YAML::Emitter& e, double v) {
    if (v < 0) e << "auto";
    else e << formatDouble(v);
  };
  return makeKey(std::move(path), field, std::move(def), rangeText(lo, hi) + " or `auto`", std::move(help), read,
                 write);
}

// An integer in [lo, hi] (a decimal literal; "2.0" is not one). Signed fields are read as long.
template <class F, class T = FieldOf<F>, class P = std::conditional_t<std::is_unsigned_v<T>, uint64_t, long>>
ConfigKey integer(std::string path, F field, std::string def, std::type_identity_t<P> lo, std::type_identity_t<P> hi,
                  std::string help) {
  auto read = [lo, hi](const YAML::Node& n, const std::string& key, T& v, ConfigIssues& out) {
    P x = 0;
    if (!readInteger<P>(n, key, lo, hi, x, out)) return false;
    v = static_cast<T>(x);
    return true;
  };
  auto write = [](YAML::Emitter& e, T v) {
    if constexpr (std::is_unsigned_v<T>) e << std::to_string(v);
    else e << static_cast<long>(v);
  };
  return makeKey(std::move(path), field, std::move(def), fmt::format("[{}, {}]", lo, hi), std::move(help), read, write);
}

template <class F>
ConfigKey boolean(std::string path, F field, std::string def, std::string help) {
  auto write = [](YAML::Emitter& e, bool v) { e << (v ? "true" : "false"); };
  return makeKey(std::move(path), field, std::move(def), "`true`, `false`", std::move(help), readBool, write);
}

// One of the names of `values`.
template <class F, class E = FieldOf<F>>
ConfigKey choice(std::string path, F field, std::string def, std::vector<std::pair<std::string, E>> values,
                 std::string help) {
  std::vector<std::string> names;
  for (const auto& [name, _] : values) names.push_back(name);
  auto read = [values, names](const YAML::Node& n, const std::string& key, E& v, ConfigIssues& out) {
    size_t i = 0;
    if (!readName(n, key, names, i, out)) return false;
    v = values[i].second;
    return true;
  };
  auto write = [values](YAML::Emitter& e, E v) {
    for (const auto& [name, x] : values)
      if (x == v) {
        e << name;
        return;
      }
    e << "?";  // not a value the config can hold
  };
  return makeKey(std::move(path), field, std::move(def), namesText(names), std::move(help), read, write);
}

// The model option ModelOptions::kOptions[i] as `model.<key>`: its names and default come from
// that one table (cost/model/model.h), and only that option is read, written or reset.
inline ConfigKey modelOption(size_t i, std::string help) {
  const ModelOptions::Option& o = ModelOptions::kOptions.at(i);
  const std::string key = o.key;
  const std::vector<std::string> names(o.values.begin(), o.values.end());
  ConfigKey k;
  k.path = "model." + key;
  k.def = ModelOptions().value(key);
  k.range = namesText(names);
  k.help = std::move(help);
  k.reset = [key](SearchConfig& c) { c.model.set(key, ModelOptions().value(key)); };
  k.read = [key, names, path = k.path](SearchConfig& c, const YAML::Node& n, ConfigIssues& out) {
    size_t v = 0;
    if (readName(n, path, names, v, out)) c.model.set(key, names[v]);
  };
  k.write = [key](YAML::Emitter& e, const SearchConfig& c) { e << c.model.value(key); };
  return k;
}

// The worker kinds, written as a flow list.
template <class F>
ConfigKey workers(std::string path, F field, std::string def, std::string help) {
  return makeKey(std::move(path), field, std::move(def), workersRangeText(), std::move(help), readWorkers,
                 writeWorkers);
}

// Move name -> weight in [0, 1e6]; a value given for a move replaces its weight, the others stay.
template <class F>
ConfigKey weights(std::string path, F field, std::string def, std::string help) {
  ConfigKey k = makeKey(std::move(path), field, std::move(def),
                        "`<name>` a move kind (below), the weight in " + rangeText(0, 1e6), std::move(help),
                        readWeights, writeWeights);
  k.is_map = true;
  return k;
}

}  // namespace mlsys::config_kinds
