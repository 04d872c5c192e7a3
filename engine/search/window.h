// Windows for large-neighbourhood search (engine/search/lns.cpp): the sub-problem a set of ops forms on
// its own, so that the exact solver (engine/exact/exact.h) can re-optimise a part of a schedule with
// the rest fixed, and the way back to the full problem's ids.
//
// The sub-problem of ops S (the ops of a run of consecutive subgraphs):
//   - its ops are S, in the full problem's topological order, with their types, base costs, K;
//   - its tensors are those S reads or writes, with their shapes; capacity, bandwidth, N as is;
//   - a tensor S reads but does not produce is a graph input of the sub-problem (in slow memory:
//     the schedule before the window wrote it, or the subgraph before the window retained it, in
//     which case the splice drops that retention and the tensor is written instead);
//   - a tensor S produces is a graph output of the sub-problem (it must be written, never
//     retained: V7) when the full problem needs it in slow memory after the window: it is a
//     graph output there, or an op outside S reads it (conservative: the reader may lie before
//     the window through recomputation; writing is then unnecessary but valid).
// A schedule of the sub-problem, mapped back, covers S, writes every tensor the rest of the
// schedule reads, and reads only tensors available at the window's start: replacing the window by
// it keeps the whole schedule valid (the incremental evaluator re-checks it anyway).
#pragma once
#include <unordered_map>
#include <vector>

#include "cost/model/schedule.h"
#include "cost/pricing/incremental.h"

namespace mlsys {

struct SubProblem {
  Problem p;
  std::vector<OpId> op_of;                            // sub-problem op -> full op
  std::vector<TensorId> tensor_of;                    // sub-problem tensor -> full tensor
  std::unordered_map<TensorId, TensorId> sub_tensor;  // full tensor -> sub-problem tensor
  std::unordered_map<OpId, OpId> sub_op;              // full op -> sub-problem op
};

// The sub-problem of the distinct ops `ops` of `p` (see above).
SubProblem extractSubProblem(const Problem& p, const std::vector<OpId>& ops);

// Sub-problem schedule -> full-problem schedule (ops and retained tensors renamed).
Schedule toFull(const SubProblem& w, const Schedule& s);

// Full-problem subgraphs `idx` (increasing positions) of `s` -> a sub-problem schedule: ops
// renamed, retained tensors kept only into the next subgraph when it is the next of `idx` too and
// the sub-problem allows retaining them (not its graph outputs); nothing retained after the
// last. The exact solver's incumbent for the window (it re-checks validity).
Schedule toSub(const SubProblem& w, const Schedule& s, const std::vector<int>& idx);

// A window's new subgraphs put back into the whole schedule: the Change and its price, the
// position of the block's first subgraph once applied, and (interleaved) each one's.
struct Splice {
  Change change;
  DeltaEval delta;
  int block_at = -1;
  std::vector<int> at;  // interleavedSplice: each block subgraph's position; empty: one unit at block_at
  // Where the block's subgraphs lie once applied, as runs [from, to], the last first (so that
  // retaining across one changes no position of the others).
  std::vector<std::pair<int, int>> runs(int blockSize) const;
};

// The cheaper valid splice of `block` (full-problem subgraphs running the ops of subgraphs `idx`
// of ev's schedule, increasing positions): the range from the subgraph before the window to its
// last subgraph is rebuilt as the others in it, in order, with `block` as one unit where the
// window's first subgraph was or where its last was (one placement when idx is consecutive);
// retentions are kept only into a subgraph that reads them (the sub-problem read every tensor
// from slow memory), and the placement at the window's first subgraph is also priced with the
// subgraph before the window retaining nothing (what it retained into the block may leave the block no room for its own
// retentions). delta.valid is false when no variant is valid.
Splice bestSplice(const Problem& p, IncrementalEvaluator& ev, const std::vector<int>& idx,
                  const std::vector<SubgraphSched>& block);

// `block` put back among the other subgraphs of the range from the subgraph before the window to
// its last, in a topological order of them all (Kahn's: an edge from each tensor's first writer to
// its readers; a subgraph and the next of its own part that reads a tensor it retains stay
// together): the others in their order, each block subgraph as early as its inputs allow, or as
// late as its readers allow, each also priced without the retentions between the block and the
// others; the cheapest valid (delta.valid false when none is, or on a cycle). For a window whose
// subgraphs lie far apart (a fusion component's, which the rest of the schedule runs between),
// where bestSplice's one unit fits at neither end. Retentions are kept only into a subgraph that
// reads them; block_at is the block's first subgraph, `at` each one's.
Splice interleavedSplice(const Problem& p, IncrementalEvaluator& ev, const std::vector<int>& idx,
                         const std::vector<SubgraphSched>& block);

// bestSplice, or interleavedSplice where `interleave` and idx is not consecutive and that is
// cheaper.
Splice cheapestSplice(const Problem& p, IncrementalEvaluator& ev, const std::vector<int>& idx,
                      const std::vector<SubgraphSched>& block, bool interleave);

// Retains into subgraph s + 1, one at a time, each tensor s may keep for it (moves/moves.h,
// retainableIntoNext) where that lowers the latency: a splice's ends, which its sub-problem could
// not retain across.
void retainAcross(IncrementalEvaluator& ev, int s);

}  // namespace mlsys
