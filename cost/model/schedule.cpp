#include "cost/model/schedule.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "cost/model/json_util.h"

namespace mlsys {

const char* traversalName(TraversalKind k) {
  switch (k) {
    case TraversalKind::Raster: return "raster";
    case TraversalKind::RowSnake: return "row-snake";
    case TraversalKind::ColSnake: return "col-snake";
    case TraversalKind::Custom: return "custom";
  }
  return "?";
}

std::vector<int32_t> traversalOrder(const Traversal& t, i64 ntw, i64 nth) {
  std::vector<int32_t> out;
  if (t.kind == TraversalKind::Custom) return t.order;
  out.reserve(static_cast<size_t>(ntw * nth));
  switch (t.kind) {
    case TraversalKind::Raster:
      for (i64 i = 0; i < ntw * nth; ++i) out.push_back(static_cast<int32_t>(i));
      break;
    case TraversalKind::RowSnake:
    case TraversalKind::ColSnake: {
      // Lines (rows, or columns) in order, every other one walked backwards.
      const bool rows = t.kind == TraversalKind::RowSnake;
      const i64 lines = rows ? nth : ntw, len = rows ? ntw : nth;
      for (i64 a = 0; a < lines; ++a)
        for (i64 q = 0; q < len; ++q) {
          i64 b = (a % 2 == 0) ? q : len - 1 - q;
          out.push_back(static_cast<int32_t>(rows ? a * ntw + b : b * ntw + a));
        }
      break;
    }
    default: break;
  }
  return out;
}

std::vector<int32_t> mirroredOrder(std::vector<int32_t> order, i64 ntw, i64 nth, bool mirror_cols, bool mirror_rows,
                                   bool reverse) {
  if (reverse) std::reverse(order.begin(), order.end());
  for (int32_t& t : order) {
    i64 r = t / ntw, c = t % ntw;
    if (mirror_cols) c = ntw - 1 - c;
    if (mirror_rows) r = nth - 1 - r;
    t = static_cast<int32_t>(r * ntw + c);
  }
  return order;
}

Schedule parseScheduleText(const std::string& json, const Problem& p, const std::string& ctx,
                           const std::function<bool()>& stop) {
  // Only the keys read below are stored; others are skipped unstored.
  // (op_types only to recognise a problem file given as the schedule.)
  const JsonDoc d = parseJsonDoc(
      json, ctx,
      {"subgraphs", "granularities", "tensors_to_retain", "subgraph_latencies", "traversal_orders", "op_types"}, stop);
  const rapidjson::Document& doc = d.doc;
  const std::string c = ctx + ": rule V1";
  if (!doc.IsObject()) throw InputError(c + ": top level must be a JSON object");
  if (!doc.HasMember("subgraphs") && doc.HasMember("op_types"))
    throw InputError(ctx +
                     ": this looks like a problem file (it has \"op_types\" and no \"subgraphs\"), not a schedule: "
                     "give the problem first, then the schedule");
  auto arr = [&](const char* key) -> const rapidjson::Value& {
    const auto& v = requireMember(doc, key, c);
    if (!v.IsArray()) throw InputError(c + ": \"" + std::string(key) + "\" must be an array");
    return v;
  };
  const auto& S = arr("subgraphs");
  const auto& G = arr("granularities");
  const auto& R = arr("tensors_to_retain");
  const auto& L = arr("subgraph_latencies");
  const rapidjson::Value* T = nullptr;
  if (auto it = doc.FindMember("traversal_orders"); it != doc.MemberEnd()) {
    if (!it->value.IsArray() && !it->value.IsNull())
      throw InputError(c + ": \"traversal_orders\" must be an array or null");
    if (it->value.IsArray()) T = &it->value;
  }
  const auto n = S.Size();
  auto same = [&](const rapidjson::Value& a, const char* key) {
    if (a.Size() != n)
      throw InputError(c + ": \"" + std::string(key) + "\" has " + std::to_string(a.Size()) +
                       " entries but \"subgraphs\" has " + std::to_string(n));
  };
  same(G, "granularities");
  same(R, "tensors_to_retain");
  same(L, "subgraph_latencies");
  if (T) same(*T, "traversal_orders");
  Schedule s;
  s.subgraphs.reserve(n);
  s.reported.reserve(n);
  // Field names are built only on error (lambdas): traversal orders can hold millions of entries.
  for (rapidjson::SizeType i = 0; i < n; ++i) {
    if (stop && (i & 4095) == 4095 && stop()) throw ReadInterrupted(ctx + ": reading was interrupted");
    SubgraphSched sg;
    auto at = [&](const char* field) { return c + ": " + field + "[" + std::to_string(i) + "]"; };
    if (!S[i].IsArray() || S[i].Size() == 0)
      throw InputError(at("subgraphs") + " must be a non-empty array of op indices");
    sg.ops.reserve(S[i].Size());
    for (rapidjson::SizeType j = 0; j < S[i].Size(); ++j)
      sg.ops.push_back(static_cast<OpId>(d.requireInt(
          S[i][j], 0, p.numOps() - 1, [&] { return at("subgraphs") + "[" + std::to_string(j) + "] (op index)"; })));
    if (!G[i].IsArray() || G[i].Size() != 3) throw InputError(at("granularities") + " must be an array [w, h, k]");
    sg.gran.w = d.requireInt(G[i][0], 1, kMaxDim, [&] { return at("granularities") + "[0] (w)"; });
    sg.gran.h = d.requireInt(G[i][1], 1, kMaxDim, [&] { return at("granularities") + "[1] (h)"; });
    sg.gran.k = d.requireInt(G[i][2], 1, kMaxDim, [&] { return at("granularities") + "[2] (k)"; });
    if (!R[i].IsArray()) throw InputError(at("tensors_to_retain") + " must be an array");
    sg.retain.reserve(R[i].Size());
    for (rapidjson::SizeType j = 0; j < R[i].Size(); ++j)
      sg.retain.push_back(static_cast<TensorId>(d.requireInt(R[i][j], 0, p.numTensors() - 1, [&] {
        return at("tensors_to_retain") + "[" + std::to_string(j) + "] (tensor index)";
      })));
    if (T && !(*T)[i].IsNull()) {
      const auto& o = (*T)[i];
      if (!o.IsArray()) throw InputError(at("traversal_orders") + " must be null or an array of tile indices");
      sg.trav.kind = TraversalKind::Custom;
      sg.trav.order.reserve(o.Size());
      for (rapidjson::SizeType j = 0; j < o.Size(); ++j)
        sg.trav.order.push_back(static_cast<int32_t>(
            d.requireInt(o[j], 0, INT32_MAX, [&] { return at("traversal_orders") + "[" + std::to_string(j) + "]"; })));
    }
    if (!L[i].IsNumber()) throw InputError(at("subgraph_latencies") + " must be a number");
    // RapidJSON reads some out-of-range literals (e.g. 5922337203685471e300) as infinity.
    if (!std::isfinite(L[i].GetDouble()))
      throw InputError(at("subgraph_latencies") + " is out of the range of a double");
    s.reported.push_back(L[i].GetDouble());
    s.subgraphs.push_back(std::move(sg));
  }
  return s;
}

Schedule parseScheduleFile(const std::string& path, const Problem& p, const ReadLimits& lim) {
  return parseScheduleText(readTextFile(path, "schedule", lim), p, "schedule '" + path + "'", lim.stop);
}

std::pair<i64, i64> subgraphGrid(const Problem& p, const SubgraphSched& sg) {
  // Its non-ephemeral outputs (E1): made and not read inside, or retained though read inside (V6);
  // the grid follows the first of them (they share a shape: A-6).
  auto in = [&](OpId o) { return std::find(sg.ops.begin(), sg.ops.end(), o) != sg.ops.end(); };
  TensorId first = -1;
  for (OpId o : sg.ops) {
    if (o < 0 || o >= p.numOps()) continue;
    for (TensorId t : p.ops[o].outputs) {
      bool readInside = false;
      for (OpId c : p.consumers[t]) readInside = readInside || in(c);
      const bool kept = std::find(sg.retain.begin(), sg.retain.end(), t) != sg.retain.end();
      if ((!readInside || kept) && (first < 0 || t < first)) first = t;
    }
  }
  if (first < 0) return {1, 1};
  const i64 w = std::max<i64>(1, sg.gran.w), h = std::max<i64>(1, sg.gran.h);
  return {(p.widths[first] + w - 1) / w, (p.heights[first] + h - 1) / h};
}

std::string scheduleToJson(const Schedule& s, const Problem& p, const std::vector<double>& latencies) {
  // RapidJSON's PrettyWriter: two-space indent, arrays on one line ("[0, 1]"). Latencies go in as
  // raw numbers formatted by formatDouble (shortest round trip; RapidJSON would write 26000.0).
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  w.SetIndent(' ', 2);
  w.SetFormatOptions(rapidjson::kFormatSingleLineArray);
  auto ints = [&](const auto& v) {
    w.StartArray();
    for (auto x : v) w.Int64(static_cast<int64_t>(x));
    w.EndArray();
  };
  const size_t n = s.subgraphs.size();
  w.StartObject();
  w.Key("subgraphs");
  w.StartArray();
  for (const auto& sg : s.subgraphs) ints(sg.ops);
  w.EndArray();
  w.Key("granularities");
  w.StartArray();
  for (const auto& sg : s.subgraphs) ints(std::initializer_list<i64>{sg.gran.w, sg.gran.h, sg.gran.k});
  w.EndArray();
  w.Key("tensors_to_retain");
  w.StartArray();
  for (const auto& sg : s.subgraphs) ints(sg.retain);
  w.EndArray();
  w.Key("traversal_orders");
  w.StartArray();
  for (const auto& sg : s.subgraphs) {
    if (sg.trav.kind == TraversalKind::Raster) w.Null();
    else if (sg.trav.kind == TraversalKind::Custom) ints(sg.trav.order);
    else {  // snakes: expanded on the subgraph's grid (from its outputs)
      auto [ntw, nth] = subgraphGrid(p, sg);
      ints(traversalOrder(sg.trav, ntw, nth));
    }
  }
  w.EndArray();
  w.Key("subgraph_latencies");
  w.StartArray();
  for (size_t i = 0; i < n; ++i) {
    std::string v = i < latencies.size() ? formatDouble(latencies[i]) : "0";
    w.RawValue(v.c_str(), v.size(), rapidjson::kNumberType);
  }
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

}  // namespace mlsys
