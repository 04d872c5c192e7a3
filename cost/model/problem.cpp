#include "cost/model/problem.h"

#include <algorithm>
#include <filesystem>
#include <queue>
#include <sstream>
#include <string_view>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cost/model/json_util.h"

namespace mlsys {
namespace {

std::string idx(const char* field, size_t i) { return std::string(field) + "[" + std::to_string(i) + "]"; }

const rapidjson::Value& requireArray(const rapidjson::Value& doc, const char* key, const std::string& ctx) {
  const auto& v = requireMember(doc, key, ctx);
  if (!v.IsArray()) throw InputError(ctx + ": \"" + key + "\" must be an array");
  return v;
}

// Reads outputs[o] / inputs[o]: a list of tensor indices or, if `bare_ok`, a single index
// (read as a one-element list, named field[0] in errors).
std::vector<TensorId> readTensorList(const JsonDoc& d, const rapidjson::Value& v, const std::string& field, i64 nt,
                                     const std::string& ctx, bool bare_ok) {
  const bool bare = !v.IsArray();
  if (bare && !bare_ok) throw InputError(ctx + ": " + field + " must be an array of tensor indices");
  const rapidjson::SizeType n = bare ? 1 : v.Size();
  std::vector<TensorId> out;
  out.reserve(n);
  for (rapidjson::SizeType j = 0; j < n; ++j) {
    const i64 t = d.requireInt(
        bare ? v : v[j], 0, nt - 1, [&] { return ctx + ": " + field + "[" + std::to_string(j) + "]"; },
        "tensor index ");
    out.push_back(static_cast<TensorId>(t));
  }
  return out;
}

}  // namespace

void finalizeProblem(Problem& p, const std::string& ctx) {
  const int nt = p.numTensors(), no = p.numOps();
  if (nt == 0) throw InputError(ctx + ": \"widths\" is empty: no tensors");
  if (no == 0) throw InputError(ctx + ": \"op_types\" is empty: no ops");
  if (!p.op_names.empty() && p.op_names.size() != p.ops.size())
    throw InputError(ctx + ": \"op_names\" has " + std::to_string(p.op_names.size()) + " entries for " +
                     std::to_string(no) + " ops");
  p.producer.assign(nt, -1);
  p.consumers.assign(nt, {});
  for (int o = 0; o < no; ++o) {
    Op& op = p.ops[o];
    if (op.outputs.empty()) throw InputError(ctx + ": " + idx("outputs", o) + ": an op needs at least one output");
    if (op.inputs.empty()) throw InputError(ctx + ": " + idx("inputs", o) + ": an op needs at least one input");
    for (size_t a = 0; a < op.inputs.size(); ++a)
      for (size_t b = a + 1; b < op.inputs.size(); ++b)
        if (op.inputs[a] == op.inputs[b])
          throw InputError(ctx + ": " + idx("inputs", o) + ": tensor " + std::to_string(op.inputs[a]) +
                           " is listed twice (an op may not take the same tensor twice)");
    for (TensorId t : op.outputs) {
      if (p.producer[t] != -1)
        throw InputError(ctx + ": " + idx("outputs", o) + ": tensor " + std::to_string(t) +
                         " is already produced by op " + std::to_string(p.producer[t]));
      p.producer[t] = o;
    }
    for (TensorId t : op.inputs) {
      if (std::find(op.outputs.begin(), op.outputs.end(), t) != op.outputs.end())
        throw InputError(ctx + ": " + idx("inputs", o) + ": tensor " + std::to_string(t) +
                         " is both an input and an output of the op (a cycle)");
      p.consumers[t].push_back(o);
    }
    // Shapes.
    if (op.type == OpType::MatMul) {
      if (op.inputs.size() != 2)
        throw InputError(ctx + ": " + idx("inputs", o) + ": MatMul needs exactly 2 inputs, got " +
                         std::to_string(op.inputs.size()));
      TensorId l = op.inputs[0], r = op.inputs[1];
      for (TensorId out : op.outputs) {
        std::ostringstream os;
        if (p.widths[l] != p.heights[r])
          os << "LHS tensor " << l << " width " << p.widths[l] << " != RHS tensor " << r << " height " << p.heights[r];
        else if (p.heights[out] != p.heights[l])
          os << "output tensor " << out << " height " << p.heights[out] << " != LHS tensor " << l << " height "
             << p.heights[l];
        else if (p.widths[out] != p.widths[r])
          os << "output tensor " << out << " width " << p.widths[out] << " != RHS tensor " << r << " width "
             << p.widths[r];
        if (!os.str().empty())
          throw InputError(ctx + ": op " + std::to_string(o) + " (MatMul): shape mismatch: " + os.str());
      }
      op.K = p.widths[l];
    } else {
      op.K = 0;
      TensorId ref = op.outputs[0];
      auto check = [&](TensorId t, const char* role) {
        if (p.widths[t] != p.widths[ref] || p.heights[t] != p.heights[ref]) {
          std::ostringstream os;
          os << ctx << ": op " << o << " (Pointwise): shape mismatch: " << role << " tensor " << t << " is "
             << p.heights[t] << "x" << p.widths[t] << " (HxW) but output tensor " << ref << " is " << p.heights[ref]
             << "x" << p.widths[ref];
          throw InputError(os.str());
        }
      };
      for (TensorId t : op.inputs) check(t, "input");
      for (TensorId t : op.outputs) check(t, "output");
    }
  }
  // Topological order (Kahn, smallest op id first for determinism); leftover ops are a cycle.
  std::vector<int> indeg(no, 0);
  for (int o = 0; o < no; ++o)
    for (TensorId t : p.ops[o].inputs)
      if (p.producer[t] != -1) ++indeg[o];
  std::priority_queue<int, std::vector<int>, std::greater<>> q;
  for (int o = 0; o < no; ++o)
    if (indeg[o] == 0) q.push(o);
  p.topo.clear();
  while (!q.empty()) {
    int o = q.top();
    q.pop();
    p.topo.push_back(o);
    for (TensorId t : p.ops[o].outputs)
      for (OpId c : p.consumers[t])
        if (--indeg[c] == 0) q.push(c);
  }
  if (static_cast<int>(p.topo.size()) != no) {
    int bad = 0;
    while (indeg[bad] == 0) ++bad;
    throw InputError(ctx + ": the graph has a cycle (op " + std::to_string(bad) +
                     " depends on its own output through other ops)");
  }
  p.topo_pos.assign(no, 0);
  for (int i = 0; i < no; ++i) p.topo_pos[p.topo[i]] = i;
  p.is_graph_input.assign(nt, false);
  p.is_graph_output.assign(nt, false);
  for (int t = 0; t < nt; ++t) {
    p.is_graph_input[t] = p.producer[t] == -1 && !p.consumers[t].empty();
    p.is_graph_output[t] = p.producer[t] != -1 && p.consumers[t].empty();
  }
  // Each op must fit alone at the smallest granularity [1,1,1]: one element per distinct input
  // slice plus one per output tile element. The spec does not ask this: a subgraph of several ops
  // can fit where one of them alone does not (its ephemeral tensors take no room, E4, W2), but the
  // constructors start from one op per subgraph, so such a problem is refused here, saying why.
  for (int o = 0; o < no; ++o) {
    const Op& op = p.ops[o];
    i64 ws = static_cast<i64>(op.inputs.size() + op.outputs.size());
    if (ws > p.capacity)
      throw InputError(ctx + ": op " + std::to_string(o) +
                       " cannot fit in fast memory at any granularity: its smallest working set is " +
                       std::to_string(ws) + " elements at [1,1,1] but fast_memory_capacity is " +
                       std::to_string(p.capacity) +
                       " (mlsys needs every op to fit alone; it does not search for a fused subgraph that might fit)");
  }
}

// The optional `op_names`: one string per op (names from a model; see Problem::op_names).
static std::vector<std::string> readOpNames(const rapidjson::Value& v, rapidjson::SizeType no, const std::string& ctx) {
  if (!v.IsArray()) throw InputError(ctx + ": \"op_names\" must be an array of strings, one per op");
  if (v.Size() != no)
    throw InputError(ctx + ": \"op_names\" has " + std::to_string(v.Size()) + " entries but \"op_types\" has " +
                     std::to_string(no));
  std::vector<std::string> names;
  names.reserve(no);
  for (rapidjson::SizeType o = 0; o < no; ++o) {
    if (!v[o].IsString()) throw InputError(ctx + ": " + idx("op_names", o) + ": must be a string");
    if (v[o].GetStringLength() > kMaxOpNameBytes)
      throw InputError(ctx + ": " + idx("op_names", o) + ": longer than " + std::to_string(kMaxOpNameBytes) +
                       " bytes (" + std::to_string(v[o].GetStringLength()) + ")");
    names.emplace_back(v[o].GetString(), v[o].GetStringLength());
  }
  return names;
}

Problem parseProblemText(const std::string& json, const std::string& name) {
  const std::string ctx = name;
  // Only the keys read below are stored; others (comments, metadata, junk) are skipped unstored.
  const JsonDoc d = parseJsonDoc(json, ctx,
                                 {"widths", "heights", "inputs", "outputs", "base_costs", "op_types",
                                  "fast_memory_capacity", "slow_memory_bandwidth", "native_granularity", "op_names"});
  const rapidjson::Document& doc = d.doc;
  if (!doc.IsObject()) throw InputError(ctx + ": top level must be a JSON object");
  Problem p;
  p.name = name;
  const auto& W = requireArray(doc, "widths", ctx);
  const auto& H = requireArray(doc, "heights", ctx);
  const auto& I = requireArray(doc, "inputs", ctx);
  const auto& O = requireArray(doc, "outputs", ctx);
  const auto& B = requireArray(doc, "base_costs", ctx);
  const auto& T = requireArray(doc, "op_types", ctx);
  if (W.Size() != H.Size())
    throw InputError(ctx + ": \"widths\" has " + std::to_string(W.Size()) + " entries but \"heights\" has " +
                     std::to_string(H.Size()));
  const rapidjson::SizeType no = T.Size();
  auto sameLen = [&](const rapidjson::Value& a, const char* key) {
    if (a.Size() != no)
      throw InputError(ctx + ": \"" + key + "\" has " + std::to_string(a.Size()) + " entries but \"op_types\" has " +
                       std::to_string(no));
  };
  sameLen(I, "inputs");
  sameLen(O, "outputs");
  sameLen(B, "base_costs");
  const i64 nt = W.Size();
  p.widths.reserve(W.Size());
  p.heights.reserve(W.Size());
  for (rapidjson::SizeType t = 0; t < W.Size(); ++t) {
    p.widths.push_back(d.requireInt(W[t], 1, kMaxDim, [&] { return ctx + ": " + idx("widths", t); }));
    p.heights.push_back(d.requireInt(H[t], 1, kMaxDim, [&] { return ctx + ": " + idx("heights", t); }));
  }
  p.ops.reserve(no);
  for (rapidjson::SizeType o = 0; o < no; ++o) {
    Op op;
    if (!T[o].IsString()) throw InputError(ctx + ": " + idx("op_types", o) + ": must be a string");
    const std::string_view ty(T[o].GetString(), T[o].GetStringLength());
    if (ty == "MatMul") op.type = OpType::MatMul;
    else if (ty == "Pointwise") op.type = OpType::Pointwise;
    else
      throw InputError(ctx + ": " + idx("op_types", o) + ": unknown op type \"" + printable(ty) +
                       "\" (expected \"MatMul\" or \"Pointwise\")");
    op.inputs = readTensorList(d, I[o], idx("inputs", o), nt, ctx, false);
    // outputs[o] may be a list (the contest format) or, leniently, a bare index.
    op.outputs = readTensorList(d, O[o], idx("outputs", o), nt, ctx, true);
    op.base_cost = d.requireInt(B[o], 0, kMaxBaseCost, [&] { return ctx + ": " + idx("base_costs", o); });
    p.ops.push_back(std::move(op));
  }
  if (doc.HasMember("op_names")) p.op_names = readOpNames(doc["op_names"], no, ctx);
  p.capacity = d.requireInt(requireMember(doc, "fast_memory_capacity", ctx), 1, kMaxCapacity,
                            [&] { return ctx + ": fast_memory_capacity"; });
  p.bandwidth = d.requireInt(requireMember(doc, "slow_memory_bandwidth", ctx), 1, kMaxBandwidth,
                             [&] { return ctx + ": slow_memory_bandwidth"; });
  const auto& N = requireArray(doc, "native_granularity", ctx);
  // Exactly [N, N]: a one-entry list used to be accepted although the format has two.
  if (N.Size() != 2)
    throw InputError(ctx + ": \"native_granularity\" must have 2 entries, got " + std::to_string(N.Size()));
  p.native = d.requireInt(N[0], 1, kMaxDim, [&] { return ctx + ": native_granularity[0]"; });
  const i64 n1 = d.requireInt(N[1], 1, kMaxDim, [&] { return ctx + ": native_granularity[1]"; });
  if (n1 != p.native)
    throw InputError(ctx + ": native_granularity [" + std::to_string(p.native) + "," + std::to_string(n1) +
                     "] must have equal entries (the native size N applies to w, h and k)");
  finalizeProblem(p, ctx);
  return p;
}

Problem parseProblemFile(const std::string& path, const ReadLimits& lim) {
  std::string text = readTextFile(path, "problem", lim);
  Problem p = parseProblemText(text, "problem '" + path + "'");
  p.name = std::filesystem::path(path).stem().string();
  return p;
}

std::string problemToJson(const Problem& p) {
  std::ostringstream os;
  auto list = [&](const std::vector<i64>& v) {
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "]";
  };
  auto tlist = [&](const std::vector<TensorId>& v) {
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "]";
  };
  os << "{\n  \"widths\": ";
  list(p.widths);
  os << ",\n  \"heights\": ";
  list(p.heights);
  os << ",\n  \"inputs\": [";
  for (size_t o = 0; o < p.ops.size(); ++o) {
    os << (o ? ", " : "");
    tlist(p.ops[o].inputs);
  }
  os << "],\n  \"outputs\": [";
  for (size_t o = 0; o < p.ops.size(); ++o) {
    os << (o ? ", " : "");
    tlist(p.ops[o].outputs);
  }
  os << "],\n  \"base_costs\": [";
  for (size_t o = 0; o < p.ops.size(); ++o) os << (o ? ", " : "") << p.ops[o].base_cost;
  os << "],\n  \"op_types\": [";
  for (size_t o = 0; o < p.ops.size(); ++o)
    os << (o ? ", " : "") << (p.ops[o].type == OpType::MatMul ? "\"MatMul\"" : "\"Pointwise\"");
  if (!p.op_names.empty()) {
    os << "],\n  \"op_names\": [";
    for (size_t o = 0; o < p.op_names.size(); ++o) {
      rapidjson::StringBuffer b;
      rapidjson::Writer<rapidjson::StringBuffer> w(b);
      w.String(p.op_names[o].data(), static_cast<rapidjson::SizeType>(p.op_names[o].size()));
      os << (o ? ", " : "") << b.GetString();
    }
  }
  os << "],\n  \"fast_memory_capacity\": " << p.capacity << ",\n  \"slow_memory_bandwidth\": " << p.bandwidth
     << ",\n  \"native_granularity\": [" << p.native << ", " << p.native << "]\n}\n";
  return os.str();
}

}  // namespace mlsys
