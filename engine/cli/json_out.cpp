#include "engine/cli/json_out.h"

#include <array>
#include <cmath>
#include <type_traits>

#include <rapidjson/encodings.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "cost/model/json_util.h"

namespace mlsys {
namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

// Values: strings (escaped by the writer), numbers in the evaluator's shortest round-trip text
// ("6915.2", "16000"; null if not finite), booleans and integers.
void put(Writer& w, const std::string& s) {
  const std::string v = validUtf8(s);
  w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()), true);
}

void put(Writer& w, double v) {
  if (!std::isfinite(v)) {
    w.Null();
    return;
  }
  const std::string s = formatDouble(v);
  w.RawValue(s.c_str(), s.size(), rapidjson::kNumberType);
}

template <class T>
requires std::is_integral_v<T>
void put(Writer& w, T v) {
  if constexpr (std::is_same_v<T, bool>) w.Bool(v);
  else if constexpr (std::is_signed_v<T>) w.Int64(v);
  else w.Uint64(v);
}

template <class T>
void field(Writer& w, const char* key, const T& v) {
  w.Key(key);
  put(w, v);
}

// `key: [v, ...]`, on one line when `oneLine` (op lists, tile counts).
template <class Range>
void array(Writer& w, const char* key, const Range& values, bool oneLine = false) {
  w.Key(key);
  if (oneLine) w.SetFormatOptions(rapidjson::kFormatSingleLineArray);
  w.StartArray();
  for (const auto& v : values) put(w, v);
  w.EndArray();
  w.SetFormatOptions(rapidjson::kFormatDefault);
}

// `key: [{...}, ...]`: one object per item, its fields written by `fields(item)`.
template <class Range, class Fields>
void objects(Writer& w, const char* key, const Range& items, Fields fields) {
  w.Key(key);
  w.StartArray();
  for (const auto& item : items) {
    w.StartObject();
    fields(item);
    w.EndObject();
  }
  w.EndArray();
}

// One document: two-space indentation, a final newline.
struct Doc {
  rapidjson::StringBuffer buf;
  Writer w{buf};
  Doc() { w.SetIndent(' ', 2); }
  std::string text() const { return std::string(buf.GetString(), buf.GetSize()) + "\n"; }
};

}  // namespace

std::string statsJson(const SolveStats& s) {
  Doc d;
  Writer& w = d.w;
  w.StartObject();
  field(w, "instance", s.instance);
  field(w, "best_latency", s.best_latency);
  field(w, "on_disk", s.on_disk);
  if (!s.write_error.empty()) field(w, "write_error", s.write_error);
  field(w, "first_write_s", s.first_write_s);
  field(w, "best_found_s", s.best_found_s);
  field(w, "elapsed_s", s.elapsed_s);
  field(w, "evaluations", s.evaluations);
  field(w, "evals_per_s", s.evals_per_s);
  field(w, "writes", s.writes);
  field(w, "threads", s.threads);
  objects(w, "workers", s.workers, [&](const WorkerEvaluations& we) {
    field(w, "kind", workerKindName(we.kind));
    field(w, "evaluations", we.evaluations);
  });
  field(w, "seed", s.seed);
  field(w, "lower_bound", s.lower_bound);
  field(w, "gap", s.gap);
  field(w, "optimal", s.optimal);
  // The one proof a run makes: the best meets the lower bound (kept for readers of older stats).
  if (s.optimal) field(w, "optimal_by", "bound");
  // A valid schedule was found below the bound (an internal error, logged): null when none.
  w.Key("bound_violation");
  if (!s.bound_violation) {
    w.Null();
  } else {
    w.StartObject();
    field(w, "bound", s.bound_violation->bound);
    field(w, "latency", s.bound_violation->latency);
    field(w, "argument", s.bound_violation->argument);
    field(w, "file", s.bound_violation->file);
    w.EndObject();
  }
  field(w, "stop_reason", s.stop_reason);
  field(w, "model", s.model);
  field(w, "version", s.version);
  field(w, "config", s.config);
  w.Key("non_default");
  w.StartObject();
  for (const auto& [k, v] : s.non_default) field(w, k.c_str(), v);
  w.EndObject();
  w.Key("set");
  w.StartArray();
  for (const std::string& x : s.set) w.String(x.c_str(), static_cast<rapidjson::SizeType>(x.size()));
  w.EndArray();
  w.EndObject();
  return d.text();
}

namespace {

// Which argument gives a cover part's floor: its compute, its forced traffic, or (above both)
// the step-by-step floor (ARCHITECTURE.md, "The lower bound"); the retention price term aside.
const char* partArgument(const PartFloor& f) {
  const double v = f.value - f.retention, tol = 1e-9 * std::max(1.0, std::abs(v));
  if (v <= f.compute + tol) return "compute";
  if (v <= f.traffic + tol) return "traffic";
  return "steps";
}

}  // namespace

std::string offArgs(const BoundArgs& args) {
  std::string s;
  for (size_t i = 0; i < static_cast<size_t>(BoundArg::kCount); ++i)
    if (!args.on(static_cast<BoundArg>(i))) s += (s.empty() ? "" : ", ") + std::string(kBoundArgNames[i]);
  return s;
}

namespace {
// What set a component's value: the share bound, the edge floor, or its groups' method(s).
std::string componentSetBy(const BoundComponent& c) {
  if (c.by_large_parts) return "large-parts";
  if (c.by_shares) return "shares";
  double sum = 0;
  for (const BoundGroup& g : c.groups) sum += g.value;
  if (std::isfinite(c.edge_floor) && c.edge_floor < sum) return "edge-floors";
  std::string s;
  for (const BoundGroup& g : c.groups) {
    const std::string name = boundMethodName(g.method);
    if (s.find(name) == std::string::npos) s += (s.empty() ? "" : "+") + name;
  }
  return s;
}
// {"cover": 123.4, ...}: the arguments that gave something (leave one out).
void raises(Writer& w, const char* key, const std::vector<std::pair<BoundArg, double>>& v) {
  w.Key(key);
  w.StartObject();
  for (const auto& [a, amount] : v)
    if (amount > 0) field(w, std::string(boundArgName(a)).c_str(), amount);
  w.EndObject();
}
}  // namespace

std::string boundJson(const LowerBound& lb, const ModelOptions& m, const BoundArgs& args, const BoundAttribution& at) {
  Doc d;
  Writer& w = d.w;
  w.StartObject();
  field(w, "model", m.describe());
  field(w, "lower_bound", lb.value());
  {
    std::vector<std::string> off;
    for (size_t i = 0; i < static_cast<size_t>(BoundArg::kCount); ++i)
      if (!args.on(static_cast<BoundArg>(i))) off.emplace_back(kBoundArgNames[i]);
    array(w, "without", off, true);
  }
  field(w, "attribution", std::string(at.complete ? "complete" : "not computed (the time budget ran out)"));
  if (at.complete) raises(w, "raised_by", at.total_raise);
  field(w, "compute_floor", lb.compute);
  field(w, "traffic_floor", lb.traffic);
  field(w, "parts_bound", lb.parts);
  w.Key("seconds");
  w.StartObject();
  field(w, "floors", lb.timing.floors_s);
  field(w, "components", lb.timing.components_s);
  field(w, "priced_passes", lb.timing.prices_s);
  field(w, "priced_pass_count", lb.timing.price_passes);
  field(w, "shares", lb.timing.shares_s);
  field(w, "linear_relaxations", lb.timing.lp_s);
  w.EndObject();
  size_t ci = 0;
  objects(w, "components", lb.components, [&](const BoundComponent& c) {
    array(w, "ops", c.ops, true);
    field(w, "value", c.value);
    field(w, "set_by", componentSetBy(c));
    if (at.complete && ci < at.component_raise.size()) raises(w, "raised_by", at.component_raise[ci]);
    ++ci;
    if (std::isfinite(c.edge_floor)) field(w, "edge_floor", c.edge_floor);
    // "groups": the sum of its groups' floors (or the edge floor); "shares": the share bound.
    field(w, "argument", std::string(c.by_large_parts ? "large-parts" : c.by_shares ? "shares" : "groups"));
    if (c.large_parts > 0) field(w, "large_parts", c.large_parts);
    if (c.shares > 0) {
      field(w, "shares", c.shares);
      field(w, "closed_ops", c.closed_ops);
      field(w, "pressure_inputs", c.pressure_inputs);
      field(w, "joint_ops", c.joint_ops);
      field(w, "store_ops", c.store_ops);
      array(w, "op_shares", c.op_shares, true);
    }
    objects(w, "groups", c.groups, [&](const BoundGroup& g) {
      array(w, "ops", g.ops, true);
      field(w, "method", std::string(boundMethodName(g.method)));
      field(w, "value", g.value);
      if (g.method == BoundMethod::Cover || g.method == BoundMethod::Lp) {
        field(w, "parts_priced", g.parts);
        objects(w, "cover", g.cover, [&](const CoverPart& part) {
          array(w, "ops", part.ops, true);
          if (g.method == BoundMethod::Lp) field(w, "weight", part.weight);
          field(w, "floor", part.floor.value);
          field(w, "compute", part.floor.compute);
          field(w, "traffic", part.floor.traffic);
          field(w, "argument", std::string(partArgument(part.floor)));
          array(w, "granularity", std::array{part.floor.g.w, part.floor.g.h, part.floor.g.k}, true);
          array(w, "retained", part.floor.retained, true);
          if (part.floor.retention != 0) field(w, "retention_price", part.floor.retention);
          array(w, "recomputed", part.recomputed, true);
        });
      }
    });
  });
  w.EndObject();
  return d.text();
}

std::string evaluationJson(const Evaluation& ev, const ModelOptions& m, const std::vector<std::string>& warnings) {
  Doc d;
  Writer& w = d.w;
  w.StartObject();
  field(w, "valid", ev.valid);
  field(w, "model", m.describe());
  if (!ev.valid) {
    field(w, "rule", std::string(ruleName(ev.rule)));
    field(w, "reason", ev.reason);
    objects(w, "violations", ev.violations, [&](const Violation& v) {
      field(w, "rule", std::string(ruleName(v.rule)));
      field(w, "subgraph", v.subgraph);
      field(w, "reason", v.reason);
    });
  }
  field(w, "total_latency", ev.total);
  size_t index = 0;
  objects(w, "subgraphs", ev.subgraphs, [&](const SubgraphReport& rp) {
    field(w, "index", index++);
    field(w, "valid", rp.cost.valid);
    field(w, "latency", rp.cost.latency);
    field(w, "steps", rp.cost.steps);
    array(w, "tiles", std::array{rp.ntw, rp.nth}, true);
    field(w, "k_steps", rp.nk);
    field(w, "peak_working_set", rp.cost.peak_ws);
    field(w, "compute_bound_steps", rp.cost.compute_bound_steps);
    field(w, "memory_bound_steps", rp.cost.memory_bound_steps);
  });
  array(w, "warnings", warnings);
  w.EndObject();
  return d.text();
}

}  // namespace mlsys
