// The problem: a DAG of MatMul and Pointwise ops over 2-D tensors, plus the accelerator model.
// Parsed from the contest JSON format and validated; derived facts (producers, consumers,
// graph inputs/outputs, a topological order, MatMul K) are computed once here.
#pragma once
#include <string>
#include <vector>

#include "cost/model/types.h"

namespace mlsys {

enum class OpType : uint8_t { MatMul, Pointwise };

struct Op {
  OpType type = OpType::Pointwise;
  std::vector<TensorId> inputs;   // MatMul: [LHS, RHS]
  std::vector<TensorId> outputs;  // usually one
  i64 base_cost = 0;
  i64 K = 0;  // MatMul reduction length (W of LHS); 0 for Pointwise
};

struct Problem {
  // As read.
  std::vector<i64> widths, heights;  // per tensor: W (columns), H (rows)
  std::vector<Op> ops;
  i64 capacity = 0;   // fast_memory_capacity, elements
  i64 bandwidth = 0;  // slow_memory_bandwidth, elements per time unit
  i64 native = 0;     // N = native_granularity[0]
  std::string name;   // file stem, for messages and benches
  // Optional, one per op or empty: the names of the model nodes the ops come from (the key
  // `op_names`, written by `mlsys import`; the contest format has no such key and ignores it).
  std::vector<std::string> op_names;

  // Derived.
  std::vector<OpId> producer;                // per tensor, -1 for graph inputs
  std::vector<std::vector<OpId>> consumers;  // per tensor
  std::vector<bool> is_graph_input;          // no producer (and consumed by someone)
  std::vector<bool> is_graph_output;         // produced and consumed by no op
  std::vector<OpId> topo;                    // a topological order of ops
  std::vector<int> topo_pos;                 // position of each op in `topo`

  int numOps() const { return static_cast<int>(ops.size()); }
  int numTensors() const { return static_cast<int>(widths.size()); }
  i64 size(TensorId t) const { return widths[t] * heights[t]; }
};

// Supported ranges (bigger values are rejected so that exact 128-bit arithmetic cannot overflow).
inline constexpr i64 kMaxDim = i64{1} << 24;
inline constexpr i64 kMaxBaseCost = i64{1} << 40;
inline constexpr i64 kMaxBandwidth = i64{1} << 40;
inline constexpr i64 kMaxCapacity = i64{1} << 62;

// Parse and validate. Throws InputError with the field and index at fault, e.g.
// "problem 'x.json': inputs[3]: MatMul needs exactly 2 inputs, got 3".
Problem parseProblemFile(const std::string& path, const ReadLimits& lim = {});
Problem parseProblemText(const std::string& json, const std::string& name = "problem");
// Validates and fills the derived fields of a Problem built in code (used by parsers,
// generators and tests). Throws InputError like the parser.
void finalizeProblem(Problem& p, const std::string& ctx = "problem");

// The most bytes one op name may have (a longer one is refused, naming the op).
inline constexpr size_t kMaxOpNameBytes = 1024;

// Serialise to the contest input format (used by the generator), with `op_names` when set.
std::string problemToJson(const Problem& p);

}  // namespace mlsys
