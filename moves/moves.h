// The move kinds (one .cpp each). See move.h for the contract.
#pragma once
#include "moves/move.h"

namespace mlsys {

// Partition moves.
struct MergeMove : Move {  // fuse subgraph s with s+1 (they must share a tensor)
  const char* name() const override { return "merge"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};
struct FuseMove : Move {  // fuse subgraph s with a later linked one (shared op or tensor), not adjacent
  const char* name() const override { return "fuse"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};
struct FuseFarMove : Move {  // fuse subgraph s with a later reader of its outputs, reordering what lies between
  const char* name() const override { return "fuse-far"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};
struct SplitMove : Move {  // cut a subgraph's op list in two
  const char* name() const override { return "split"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};
struct MoveOpMove : Move {  // move a boundary op to the neighbouring subgraph
  const char* name() const override { return "move-op"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};
struct RecomputeMove : Move {  // duplicate a producer into a consumer's subgraph
  const char* name() const override { return "recompute"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};
struct UncomputeMove : Move {  // remove a duplicated op from one of its subgraphs
  const char* name() const override { return "uncompute"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};
struct ReorderMove : Move {  // move a subgraph right after the producer of one of its inputs
  const char* name() const override { return "reorder"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};
// Granularity: change w, h or k to another valid value (any integer in range, biased to
// divisors and powers of two).
struct GranularityMove : Move {
  const char* name() const override { return "granularity"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};
// Traversal: raster, row-snake, column-snake, or a local swap of a custom order.
struct TraversalMove : Move {
  const char* name() const override { return "traversal"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};
// The outputs of subgraph s (s + 1 < ev.size()) that subgraph s+1 reads and that may be retained
// (not graph outputs), in op order, each once.
std::vector<TensorId> retainableIntoNext(const IncrementalEvaluator& ev, int s);

// Retention: retain / stop retaining an output of s into s+1 (trading away, in the same change,
// tensors kept into s or out of s+1 that cannot fit beside it: retain.cpp).
struct RetainMove : Move {
  const char* name() const override { return "retain"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};

// Re-production: run the producer of a tensor subgraph s loads again, alone, just before s, and
// retain the tensor into s (reproduce.cpp).
struct ReproduceMove : Move {
  const char* name() const override { return "reproduce"; }
  bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) override;
};

}  // namespace mlsys
