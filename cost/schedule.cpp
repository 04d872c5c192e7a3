#include "cost/schedule.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include "cost/json_util.h"
#include "cost/subgraph.h"

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
      for (i64 r = 0; r < nth; ++r)
        for (i64 q = 0; q < ntw; ++q) {
          i64 c = (r % 2 == 0) ? q : ntw - 1 - q;
          out.push_back(static_cast<int32_t>(r * ntw + c));
        }
      break;
    case TraversalKind::ColSnake:
      for (i64 c = 0; c < ntw; ++c)
        for (i64 q = 0; q < nth; ++q) {
          i64 r = (c % 2 == 0) ? q : nth - 1 - q;
          out.push_back(static_cast<int32_t>(r * ntw + c));
        }
      break;
    default: break;
  }
  return out;
}

Schedule parseScheduleText(const std::string& json, const Problem& p, const std::string& ctx) {
  rapidjson::Document doc = parseJsonText(json, ctx);
  const std::string c = ctx + ": rule V1";
  if (!doc.IsObject()) throw InputError(c + ": top level must be a JSON object");
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
  for (rapidjson::SizeType i = 0; i < n; ++i) {
    SubgraphSched sg;
    std::string si = std::to_string(i);
    if (!S[i].IsArray() || S[i].Size() == 0)
      throw InputError(c + ": subgraphs[" + si + "] must be a non-empty array of op indices");
    for (rapidjson::SizeType j = 0; j < S[i].Size(); ++j)
      sg.ops.push_back(static_cast<OpId>(
          requireInt(S[i][j], c + ": subgraphs[" + si + "][" + std::to_string(j) + "] (op index)", 0, p.numOps() - 1)));
    if (!G[i].IsArray() || G[i].Size() != 3)
      throw InputError(c + ": granularities[" + si + "] must be an array [w, h, k]");
    sg.gran.w = requireInt(G[i][0], c + ": granularities[" + si + "][0] (w)", 1, kMaxDim);
    sg.gran.h = requireInt(G[i][1], c + ": granularities[" + si + "][1] (h)", 1, kMaxDim);
    sg.gran.k = requireInt(G[i][2], c + ": granularities[" + si + "][2] (k)", 1, kMaxDim);
    if (!R[i].IsArray()) throw InputError(c + ": tensors_to_retain[" + si + "] must be an array");
    for (rapidjson::SizeType j = 0; j < R[i].Size(); ++j)
      sg.retain.push_back(static_cast<TensorId>(requireInt(
          R[i][j], c + ": tensors_to_retain[" + si + "][" + std::to_string(j) + "] (tensor index)", 0, p.numTensors() - 1)));
    if (T && !(*T)[i].IsNull()) {
      const auto& o = (*T)[i];
      if (!o.IsArray()) throw InputError(c + ": traversal_orders[" + si + "] must be null or an array of tile indices");
      sg.trav.kind = TraversalKind::Custom;
      for (rapidjson::SizeType j = 0; j < o.Size(); ++j)
        sg.trav.order.push_back(static_cast<int32_t>(requireInt(
            o[j], c + ": traversal_orders[" + si + "][" + std::to_string(j) + "]", 0, INT32_MAX)));
    }
    if (!L[i].IsNumber()) throw InputError(c + ": subgraph_latencies[" + si + "] must be a number");
    // RapidJSON reads some out-of-range literals (e.g. 5922337203685471e300) as infinity.
    if (!std::isfinite(L[i].GetDouble()))
      throw InputError(c + ": subgraph_latencies[" + si + "] is out of the range of a double");
    s.reported.push_back(L[i].GetDouble());
    s.subgraphs.push_back(std::move(sg));
  }
  return s;
}

Schedule parseScheduleFile(const std::string& path, const Problem& p) {
  return parseScheduleText(readTextFile(path, "schedule"), p, "schedule '" + path + "'");
}

std::string scheduleToJson(const Schedule& s, const Problem& p, const std::vector<double>& latencies) {
  // Appends to one string with std::to_chars: explicit traversal orders can hold millions of
  // tile indices, and the writer re-serialises the best schedule several times a second.
  std::string os;
  auto num = [&](i64 v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    os.append(buf, r.ptr);
  };
  auto ints = [&](const auto& v) {
    os += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) os += ", ";
      num(static_cast<i64>(v[i]));
    }
    os += ']';
  };
  const size_t n = s.subgraphs.size();
  os += "{\n  \"subgraphs\": [";
  for (size_t i = 0; i < n; ++i) {
    if (i) os += ", ";
    ints(s.subgraphs[i].ops);
  }
  os += "],\n  \"granularities\": [";
  for (size_t i = 0; i < n; ++i) {
    const auto& g = s.subgraphs[i].gran;
    if (i) os += ", ";
    ints(std::vector<i64>{g.w, g.h, g.k});
  }
  os += "],\n  \"tensors_to_retain\": [";
  for (size_t i = 0; i < n; ++i) {
    if (i) os += ", ";
    ints(s.subgraphs[i].retain);
  }
  os += "],\n  \"traversal_orders\": [";
  for (size_t i = 0; i < n; ++i) {
    if (i) os += ", ";
    const auto& sg = s.subgraphs[i];
    if (sg.trav.kind == TraversalKind::Raster) { os += "null"; continue; }
    if (sg.trav.kind == TraversalKind::Custom) { ints(sg.trav.order); continue; }
    // Snakes: expand on the subgraph's grid (from its outputs).
    auto [ntw, nth] = subgraphGrid(p, sg);
    ints(traversalOrder(sg.trav, ntw, nth));
  }
  os += "],\n  \"subgraph_latencies\": [";
  for (size_t i = 0; i < n; ++i) {
    if (i) os += ", ";
    os += i < latencies.size() ? formatDouble(latencies[i]) : "0";
  }
  os += "]\n}\n";
  return os;
}

}  // namespace mlsys
