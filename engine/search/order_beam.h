// The candidate library and the order-aware beam (issue 14, items 1-2): a construction that is
// not bound to one topological order.
//
// CandidateLibrary: every connected (V4: through tensors produced and consumed inside), convex
// (no path leaves the set and comes back) op set of up to `max_ops` ops, enumerated in parallel
// with oneTBB (ESU enumeration from each op, the op being the set's smallest id), each with its
// boundary inputs and the outputs it could retain. A candidate is priced lazily, per context
// (retained-in set, retained-out set), at its best granularity over the full range
// (exactGranularity, engine/exact/exact.h: every tile count and k-step count, pruned by sound bounds),
// and the price is cached; the library is shared read-only but for that cache (mutex-guarded).
//
// orderBeam: a beam over states (ops covered, tensors resident from the previous subgraph);
// the tensors in slow memory follow from the covered ops (every output read later is written
// unless retained). An extension is any candidate whose ops are all uncovered, whose inputs are
// all produced by covered ops (or graph inputs), and that reads every resident tensor and all of
// its other readers (a retained tensor is not written), with retained-out set none, all its
// retainable outputs, or each one alone. States are layered by the number of covered ops;
// states with the same covered and resident sets keep the cheapest (dominance); `width` per
// layer; each layer expands in parallel. Returns false if stopped or no state covers the graph.
#pragma once
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "cost/pricing/evaluator.h"

namespace mlsys {

struct Candidate {
  std::vector<OpId> ops;             // topological order
  std::vector<TensorId> inputs;      // read, not produced inside (sorted)
  std::vector<TensorId> retainable;  // produced, read outside, not a graph output, fits alone (sorted)
};

class CandidateLibrary {
 public:
  CandidateLibrary(const Problem& p, const ModelOptions& m, int max_ops, const std::function<bool()>& stop,
                   size_t max_per_op = 256);
  const std::vector<Candidate>& candidates() const { return cands_; }
  const std::vector<int>& withOp(OpId o) const { return with_op_[o]; }
  bool complete() const { return complete_; }  // false if `stop` cut the enumeration short

  struct Priced {
    bool valid = false;
    double latency = 0;
    Granularity g;
    Traversal trav;
  };
  // Candidate c with retained-in `rin` and retained-out `rout` (both sorted), cached.
  Priced price(int c, const std::vector<TensorId>& rin, const std::vector<TensorId>& rout,
               const std::function<bool()>& stop);
  size_t priced() const;
  // Asked before each candidate that is not in the cache is priced (one evaluation of the search's
  // --max-evals budget): false leaves it unpriced (invalid, not cached). Empty: always priced.
  void setTake(std::function<bool()> take) { take_ = std::move(take); }

 private:
  const Problem& p_;
  ModelOptions m_;
  std::vector<Candidate> cands_;
  std::vector<std::vector<int>> with_op_;
  bool complete_ = true;
  mutable std::mutex mu_;
  std::map<std::vector<int64_t>, Priced> cache_;
  std::function<bool()> take_;
};

bool orderBeam(const Problem& p, CandidateLibrary& lib, int width, const std::function<bool()>& stop, Schedule& out,
               double& latency);

}  // namespace mlsys
