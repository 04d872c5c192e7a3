#include "engine/io/config.h"

#include "engine/base/limits.h"
#include <charconv>
#include <map>
#include <sstream>
#include <type_traits>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "cost/json_util.h"
#include "cost/types.h"
#include "moves/move.h"

namespace mlsys {
namespace {

// Where a config comes from: a file (errors name its line) or a --set argument (no lines).
struct Ctx {
  std::string name;
  bool lines = true;
  [[noreturn]] void fail(const YAML::Node& n, const std::string& key, const std::string& why) const {
    std::string where = lines && n.Mark().line >= 0 ? "line " + std::to_string(n.Mark().line + 1) + ": " : "";
    // Each piece cut to 200 bytes: a 40 KB --set value is not echoed whole.
    throw InputError(printable(name) + ": " + where + printable(key) + ": " + printable(why));
  }
};

double num(const Ctx& c, const YAML::Node& n, const std::string& key, double lo, double hi) {
  double v;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    c.fail(n, key, n.IsScalar() ? fmt::format("expected a number, got \"{}\"", n.Scalar()) : "expected a number, got a non-scalar");
  }
  if (!(v >= lo && v <= hi))
    c.fail(n, key, "value " + formatDouble(v) + " is out of range [" + formatDouble(lo) + ", " + formatDouble(hi) + "]");
  return v;
}

// Integer keys take decimal integer literals only: "2.7" used to be truncated to 2 silently.
template <class T = long>
T integer(const Ctx& c, const YAML::Node& n, const std::string& key, std::type_identity_t<T> lo, std::type_identity_t<T> hi) {
  if (!n.IsScalar()) c.fail(n, key, "expected an integer, got a non-scalar");
  const std::string& s = n.Scalar();
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && *b == '+' && b + 1 != e && b[1] != '-') ++b;  // from_chars takes '-' but not '+'
  T v = 0;
  auto r = std::from_chars(b, e, v);
  if constexpr (std::is_unsigned_v<T>) {
    long long sv;  // "-3" is an integer, out of range of an unsigned key
    if (auto rs = std::from_chars(b, e, sv); r.ec == std::errc::invalid_argument && rs.ec != std::errc::invalid_argument && rs.ptr == e)
      r = {e, std::errc::result_out_of_range};
  }
  if (r.ec == std::errc::invalid_argument || r.ptr != e) c.fail(n, key, "expected an integer, got \"" + s + "\"");
  if (r.ec == std::errc::result_out_of_range || v < lo || v > hi)
    c.fail(n, key, "value " + s + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

bool boolean(const Ctx& c, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false")) c.fail(n, key, "expected true or false");
  return n.Scalar() == "true";
}

// Checks that `m` is a mapping with known, distinct keys. yaml-cpp keeps every pair of a map
// with a repeated key but m["key"] returns the first, so repeats would be silently ignored.
void checkKeys(const Ctx& c, const YAML::Node& m, const std::string& section, const std::vector<std::string>& known) {
  if (!m.IsMap()) c.fail(m, section, "expected a mapping");
  std::map<std::string, int> seen;  // key -> line (1-based) of its first occurrence
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!it->first.IsScalar()) c.fail(it->first, section.empty() ? "(top level)" : section, "keys must be plain names");
    const std::string& k = it->first.Scalar();
    const std::string full = (section.empty() ? "" : section + ".") + k;
    bool ok = false;
    for (const auto& x : known) ok |= x == k;
    if (!ok) {
      std::string list;
      for (const auto& x : known) list += (list.empty() ? "" : ", ") + x;
      c.fail(it->first, full, "unknown key (known: " + list + ")");
    }
    auto [first, fresh] = seen.emplace(k, it->first.Mark().line + 1);
    if (!fresh) c.fail(it->first, full, "duplicate key (first at line " + std::to_string(first->second) + ")");
  }
}

YAML::Node parseYaml(const std::string& yaml, const std::string& name) {
  try {
    return YAML::Load(yaml);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard (its message is "bad file").
    throw InputError(name + ": line " + std::to_string(e.mark.line + 1) + ": not valid YAML: nested too deeply for the YAML parser (a config needs 4 levels)");
  } catch (const YAML::Exception& e) {
    throw InputError(name + ": line " + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
}

// A map of move weights (sa.moves, lns.moves) into `w`: every key a move, every value in [0, 1e6].
void moveWeights(const Ctx& c, const YAML::Node& mv, const std::string& where, std::map<std::string, double>& w) {
  checkKeys(c, mv, where, moveNames());
  for (auto it = mv.begin(); it != mv.end(); ++it) {
    std::string k = it->first.as<std::string>();
    w[k] = num(c, it->second, where + "." + k, 0, 1e6);
  }
}

// The config a YAML tree describes, over the defaults; every key and value checked. (A const
// tree: yaml-cpp's non-const operator[] would turn a null node into a map.)
SearchConfig fromTree(const YAML::Node& root, const Ctx& c) {
  SearchConfig cfg;
  if (root.IsNull()) return cfg;
  checkKeys(c, root, "", {"search", "sa", "beam", "lns", "pool", "cache", "model"});
  if (auto s = root["search"]) {
    checkKeys(c, s, "search", {"seconds", "threads", "seed", "workers", "log_interval_s", "write_interval_s", "margin_s", "exact_share"});
    if (auto t = s["seconds"]) cfg.seconds = t.IsScalar() && t.Scalar() == "auto" ? -1 : num(c, t, "search.seconds", 0.001, 1e9);
    if (s["threads"]) cfg.threads = static_cast<int>(integer(c, s["threads"], "search.threads", 0, 1000000));
    if (s["seed"]) cfg.seed = integer<uint64_t>(c, s["seed"], "search.seed", 0, UINT64_MAX);
    if (auto w = s["workers"]) {
      if (!w.IsSequence() || w.size() == 0) c.fail(w, "search.workers", "expected a non-empty list of worker kinds (beam, sa, lns)");
      cfg.workers.clear();
      for (const auto& x : w) {
        if (!x.IsScalar()) c.fail(x, "search.workers", "expected a worker kind (beam, sa, lns), got a non-scalar");
        const std::string& k = x.Scalar();
        std::optional<WorkerKind> kind = parseWorkerKind(k);
        if (!kind) c.fail(x, "search.workers", "unknown worker kind \"" + k + "\" (known: beam, sa, lns)");
        cfg.workers.push_back(*kind);
      }
    }
    if (s["log_interval_s"]) cfg.log_interval_s = num(c, s["log_interval_s"], "search.log_interval_s", 0.01, 3600);
    if (s["write_interval_s"]) cfg.write_interval_s = num(c, s["write_interval_s"], "search.write_interval_s", 0, 60);
    if (s["margin_s"]) cfg.margin_s = num(c, s["margin_s"], "search.margin_s", 0, 60);
    if (s["exact_share"]) cfg.exact_share = num(c, s["exact_share"], "search.exact_share", 0.01, 1);
  }
  if (auto s = root["sa"]) {
    checkKeys(c, s, "sa", {"t0", "t1", "restart_after", "sync_every", "adopt_pool_best", "moves"});
    if (s["t0"]) cfg.sa_t0 = num(c, s["t0"], "sa.t0", 0, 1);
    if (s["t1"]) cfg.sa_t1 = num(c, s["t1"], "sa.t1", 0, 1);
    if (s["restart_after"]) cfg.sa_restart_after = integer(c, s["restart_after"], "sa.restart_after", 1, 1000000000000);
    if (s["sync_every"]) cfg.sa_sync_every = integer(c, s["sync_every"], "sa.sync_every", 1, 1000000000000);
    if (s["adopt_pool_best"]) cfg.sa_adopt_pool_best = boolean(c, s["adopt_pool_best"], "sa.adopt_pool_best");
    if (auto mv = s["moves"]) moveWeights(c, mv, "sa.moves", cfg.move_weights);
  }
  if (auto s = root["beam"]) {
    checkKeys(c, s, "beam", {"width", "max_segment", "time_share", "then", "order_width", "library_ops", "order_max_ops", "order_time_share"});
    if (s["width"]) cfg.beam_width = static_cast<int>(integer(c, s["width"], "beam.width", 1, 1024));
    if (s["max_segment"]) cfg.beam_max_segment = static_cast<int>(integer(c, s["max_segment"], "beam.max_segment", 1, 64));
    if (s["time_share"]) cfg.beam_time_share = num(c, s["time_share"], "beam.time_share", 0, 1);
    if (s["order_width"]) cfg.beam_order_width = static_cast<int>(integer(c, s["order_width"], "beam.order_width", 0, 4096));
    if (s["library_ops"]) cfg.beam_library_ops = static_cast<int>(integer(c, s["library_ops"], "beam.library_ops", 1, 8));
    if (s["order_max_ops"]) cfg.beam_order_max_ops = static_cast<int>(integer(c, s["order_max_ops"], "beam.order_max_ops", 0, 1000000));
    if (s["order_time_share"]) cfg.beam_order_time_share = num(c, s["order_time_share"], "beam.order_time_share", 0, 1);
    if (auto t = s["then"]) {
      std::optional<WorkerKind> kind = t.IsScalar() ? parseWorkerKind(t.Scalar()) : std::nullopt;
      if (!kind || *kind == WorkerKind::Beam) c.fail(t, "beam.then", "expected sa or lns");
      cfg.beam_then = *kind;
    }
  }
  if (auto s = root["lns"]) {
    checkKeys(c, s, "lns", {"whole_graph_ops", "window_ops_min", "window_ops_max", "window_seconds", "stall_windows", "every_side", "adaptive", "slice_seconds", "polish", "moves"});
    if (s["whole_graph_ops"]) cfg.lns_whole_graph_ops = static_cast<int>(integer(c, s["whole_graph_ops"], "lns.whole_graph_ops", 0, kExactMaxOps));
    if (s["window_ops_min"]) cfg.lns_window_ops_min = static_cast<int>(integer(c, s["window_ops_min"], "lns.window_ops_min", 2, kExactMaxOps));
    if (s["window_ops_max"]) cfg.lns_window_ops_max = static_cast<int>(integer(c, s["window_ops_max"], "lns.window_ops_max", 2, kExactMaxOps));
    if (s["window_seconds"]) cfg.lns_window_seconds = num(c, s["window_seconds"], "lns.window_seconds", 0.001, 3600);
    if (s["stall_windows"]) cfg.lns_stall_windows = integer(c, s["stall_windows"], "lns.stall_windows", 1, 1000000000);
    if (s["every_side"]) cfg.lns_every_side = boolean(c, s["every_side"], "lns.every_side");
    if (s["adaptive"]) cfg.lns_adaptive = boolean(c, s["adaptive"], "lns.adaptive");
    if (s["slice_seconds"]) cfg.lns_slice_seconds = num(c, s["slice_seconds"], "lns.slice_seconds", 0.001, 3600);
    if (s["polish"]) cfg.lns_polish = boolean(c, s["polish"], "lns.polish");
    if (auto mv = s["moves"]) moveWeights(c, mv, "lns.moves", cfg.lns_move_weights);
    if (cfg.lns_window_ops_min > cfg.lns_window_ops_max)
      c.fail(s, "lns.window_ops_min", "must not exceed lns.window_ops_max (" + std::to_string(cfg.lns_window_ops_max) + ")");
  }
  if (auto s = root["pool"]) {
    checkKeys(c, s, "pool", {"size", "isolate_first"});
    if (s["size"]) cfg.pool_size = static_cast<int>(integer(c, s["size"], "pool.size", 1, 1024));
    if (s["isolate_first"]) cfg.pool_isolate_first = boolean(c, s["isolate_first"], "pool.isolate_first");
  }
  if (auto s = root["cache"]) {
    checkKeys(c, s, "cache", {"entries"});
    if (s["entries"]) cfg.cache_entries = integer(c, s["entries"], "cache.entries", 1024, 100000000);
  }
  if (auto s = root["model"]) {
    checkKeys(c, s, "model", {"matmul_compute", "matmul_chains", "k_limit"});
    for (auto it = s.begin(); it != s.end(); ++it) {
      // (as<std::string>() of a list would throw a yaml-cpp error naming neither file nor key)
      if (!it->second.IsScalar()) c.fail(it->second, "model." + it->first.Scalar(), "expected a scalar value");
      try {
        cfg.model.set(it->first.Scalar(), it->second.Scalar());
      } catch (const InputError& e) {
        c.fail(it->second, "model." + it->first.as<std::string>(), e.what());
      }
    }
  }
  auto sum = [](const std::map<std::string, double>& w) {
    double t = 0;
    for (const auto& [k, v] : w) t += v;
    return t;
  };
  if (sum(cfg.annealWeights(false)) <= 0) throw InputError(c.name + ": sa.moves: all move weights are zero");
  if (sum(cfg.annealWeights(true)) <= 0) throw InputError(c.name + ": lns.moves: all move weights of the LNS workers' annealing are zero (over sa.moves)");
  return cfg;
}

// Applies one --set argument, "KEY=VALUE", to the tree: KEY a dotted path (sections are created
// as needed), VALUE parsed as YAML.
void applyOverride(YAML::Node& root, const std::string& kv, const Ctx& c) {
  const size_t eq = kv.find('=');
  if (eq == std::string::npos) throw ConfigOverrideSyntaxError("--set " + printable(kv) + ": expected KEY=VALUE (e.g. --set sa.t0=0.001)");
  const std::string key = kv.substr(0, eq), text = kv.substr(eq + 1);
  std::vector<std::string> path;
  for (size_t b = 0;;) {
    size_t dot = key.find('.', b);
    path.push_back(key.substr(b, dot == std::string::npos ? std::string::npos : dot - b));
    if (path.back().empty()) throw ConfigOverrideSyntaxError("--set " + printable(kv) + ": '" + printable(key) + "' is not a key (e.g. sa.t0)");
    if (dot == std::string::npos) break;
    b = dot + 1;
  }
  YAML::Node value(text);  // "" stays an empty string, not null
  try {
    if (!text.empty()) value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(printable(c.name) + ": " + printable(key) + ": not a valid YAML value: " + e.msg);
  }
  if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
  YAML::Node at = root;
  std::string prefix;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    prefix += (i ? "." : "") + path[i];
    YAML::Node next = at[path[i]];
    if (!next.IsDefined() || next.IsNull()) next = YAML::Node(YAML::NodeType::Map);
    else if (!next.IsMap()) c.fail(next, key, "unknown key (" + prefix + " is not a section)");
    at.reset(next);
  }
  at[path.back()] = value;
}

}  // namespace

SearchConfig loadConfigText(const std::string& yaml, const std::string& name) {
  return fromTree(parseYaml(yaml, name), Ctx{name});
}

SearchConfig loadConfig(const std::string& path, const std::vector<std::string>& overrides) {
  const std::string name = "config '" + path + "'";
  // A config is small: 16 MiB at most (a FIFO is waited for 10 s at most).
  ReadLimits lim;
  lim.max_bytes = 16 * 1024 * 1024;
  lim.raise_hint = "a config is at most 16 MiB";
  YAML::Node root = path.empty() ? YAML::Node() : parseYaml(readTextFile(path, "config", lim), name);
  SearchConfig cfg = fromTree(root, Ctx{name});
  // Each override is checked on the whole tree as it then stands, so an error names the --set
  // argument that caused it (the file alone was checked above).
  for (const std::string& kv : overrides) {
    Ctx c{"--set " + kv, false};
    applyOverride(root, kv, c);
    cfg = fromTree(root, c);
  }
  return cfg;
}

std::string configToYaml(const SearchConfig& c) {
  // yaml-cpp's emitter does the layout and any quoting; numbers are written as formatDouble
  // writes them (the shortest decimal that reads back as the same double).
  YAML::Emitter e;
  auto real = [&](const char* key, double v) { e << YAML::Key << key << YAML::Value << formatDouble(v); };
  auto integer = [&](const char* key, long v) { e << YAML::Key << key << YAML::Value << v; };
  auto text = [&](const char* key, const char* v) { e << YAML::Key << key << YAML::Value << v; };
  auto section = [&](const char* name, const auto& body) {
    e << YAML::Key << name << YAML::Value << YAML::BeginMap;
    body();
    e << YAML::EndMap;
  };
  e << YAML::BeginMap;
  section("search", [&] {
    if (c.seconds < 0) text("seconds", "auto");
    else real("seconds", c.seconds);
    integer("threads", c.threads);
    e << YAML::Key << "seed" << YAML::Value << std::to_string(c.seed);
    e << YAML::Key << "workers" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (WorkerKind w : c.workers) e << workerKindName(w);
    e << YAML::EndSeq;
    real("log_interval_s", c.log_interval_s);
    real("write_interval_s", c.write_interval_s);
    real("margin_s", c.margin_s);
    real("exact_share", c.exact_share);
  });
  section("sa", [&] {
    real("t0", c.sa_t0);
    real("t1", c.sa_t1);
    integer("restart_after", c.sa_restart_after);
    integer("sync_every", c.sa_sync_every);
    text("adopt_pool_best", c.sa_adopt_pool_best ? "true" : "false");
    section("moves", [&] {
      for (const auto& [k, w] : c.move_weights) real(k.c_str(), w);
    });
  });
  section("beam", [&] {
    integer("width", c.beam_width);
    integer("max_segment", c.beam_max_segment);
    real("time_share", c.beam_time_share);
    integer("order_width", c.beam_order_width);
    integer("library_ops", c.beam_library_ops);
    integer("order_max_ops", c.beam_order_max_ops);
    real("order_time_share", c.beam_order_time_share);
    text("then", workerKindName(c.beam_then));
  });
  section("lns", [&] {
    integer("whole_graph_ops", c.lns_whole_graph_ops);
    integer("window_ops_min", c.lns_window_ops_min);
    integer("window_ops_max", c.lns_window_ops_max);
    real("window_seconds", c.lns_window_seconds);
    integer("stall_windows", c.lns_stall_windows);
    text("every_side", c.lns_every_side ? "true" : "false");
    text("adaptive", c.lns_adaptive ? "true" : "false");
    real("slice_seconds", c.lns_slice_seconds);
    text("polish", c.lns_polish ? "true" : "false");
    section("moves", [&] {
      for (const auto& [k, w] : c.lns_move_weights) real(k.c_str(), w);
    });
  });
  section("pool", [&] {
    integer("size", c.pool_size);
    text("isolate_first", c.pool_isolate_first ? "true" : "false");
  });
  section("cache", [&] { integer("entries", c.cache_entries); });
  section("model", [&] {
    text("matmul_compute",
         c.model.matmul_compute == ModelOptions::MatmulCompute::ReductionDepth ? "reduction_depth" : "native_depth");
    text("matmul_chains", c.model.matmul_chains == ModelOptions::MatmulChains::Literal ? "literal" : "reject");
    text("k_limit", c.model.k_limit == ModelOptions::KLimit::Native ? "native" : "reduction");
  });
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace mlsys
