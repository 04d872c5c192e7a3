#include "cost/model/rule.h"

#include <iterator>
#include <ostream>

namespace mlsys {
namespace {

struct RuleInfo {
  Rule rule;
  const char* name;
  bool granularity_can_fix;
  const char* summary;
};

constexpr RuleInfo kRules[] = {
    {Rule::None, "", false, "valid"},
    {Rule::V1, "V1", false, "format: the required lists, parallel and of equal length, plain JSON numbers"},
    {Rule::V2, "V2", false, "coverage: every op appears in at least one subgraph"},
    {Rule::V3, "V3", false, "order: a subgraph lists each op once, in topological order"},
    {Rule::V4, "V4", false, "connectivity: a subgraph's ops are linked by tensors produced and consumed inside it"},
    {Rule::V5, "V5", false,
     "availability: a boundary input is a graph input, retained into the subgraph, or written by an earlier one"},
    {Rule::V6, "V6", false, "retention: a subgraph retains only tensors it produces"},
    {Rule::V7, "V7", false, "graph outputs: each reaches slow memory and is never retained"},
    {Rule::V8, "V8", true, "granularity: 1 <= w, h, k <= N, and k <= K of every MatMul in the subgraph"},
    {Rule::V9, "V9", true, "fusion: with k < K, a Pointwise producing a MatMul's LHS needs w >= K, its RHS h >= K"},
    {Rule::V10, "V10", true, "traversal: an explicit order is a permutation of the subgraph's tiles"},
    {Rule::V11, "V11", true, "capacity: the working set fits in fast memory at every step"},
    {Rule::E2, "E2", true,
     "k-loop: the accumulating MatMuls share one K and complete their reduction before another MatMul reads them"},
    {Rule::E3, "E3", false, "required regions: every op computes something the subgraph needs"},
    {Rule::A6, "A-6", false, "output shapes: the non-ephemeral outputs of a subgraph have one shape"},
    {Rule::Chains, "chains", false, "a chain of three or more MatMuls in a subgraph, under matmul_chains=reject"},
    {Rule::Range, "range", true,
     "exactness: at most 2^63 - 1 steps, the latency fits 128 bits in lowest terms, any step walk is bounded"},
    {Rule::WalkLimit, "walk-limit", true, "search only: pricing needs a step walk longer than the search allows"},
    {Rule::OrderSize, "order-size", true, "search only: a non-raster order over more tiles than can be written out"},
    {Rule::Interrupted, "interrupted", false, "the evaluation was interrupted by a signal"},
    {Rule::Full, "full", false, "search only: the full evaluator rejects the changed schedule"},
};

constexpr bool tableInEnumOrder() {
  for (size_t i = 0; i < std::size(kRules); ++i)
    if (static_cast<size_t>(kRules[i].rule) != i) return false;
  return std::size(kRules) == static_cast<size_t>(Rule::Full) + 1;
}
static_assert(tableInEnumOrder(), "kRules lists every Rule once, in declaration order");

const RuleInfo& info(Rule r) { return kRules[static_cast<size_t>(r)]; }

}  // namespace

const char* ruleName(Rule r) { return info(r).name; }
const char* ruleSummary(Rule r) { return info(r).summary; }
bool granularityCanFix(Rule r) { return info(r).granularity_can_fix; }

std::ostream& operator<<(std::ostream& os, Rule r) { return os << ruleName(r); }

}  // namespace mlsys
