// Moves: each proposes a Change to the current schedule (never mutating it). The search prices
// the change with IncrementalEvaluator::evaluate() and commits it with apply().
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cost/pricing/granularity.h"
#include "cost/pricing/incremental.h"

namespace mlsys {

using Rng = std::mt19937_64;

inline uint64_t randBelow(Rng& r, uint64_t n) { return n ? r() % n : 0; }
inline double rand01(Rng& r) { return static_cast<double>(r() >> 11) * (1.0 / 9007199254740992.0); }

// Independent random streams per (seed, worker id, stream) (splitmix64 finaliser).
inline uint64_t mixSeed(uint64_t seed, int id, int stream) {
  uint64_t z =
      seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(id) * 0xbf58476d1ce4e5b9ULL + static_cast<uint64_t>(stream);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Move {
 public:
  virtual ~Move() = default;
  virtual const char* name() const = 0;
  // Whether the move can ever apply to this problem (e.g. k-moves need a MatMul).
  virtual bool supports(const Problem&) const { return true; }
  // Proposes a random neighbour; false if none applies at the picked place.
  virtual bool propose(IncrementalEvaluator& ev, Rng& rng, Change& out) = 0;
};

// Registry: name -> factory. Names: merge, fuse, split, move-op, recompute, uncompute, granularity,
// traversal, retain, reorder.
std::unique_ptr<Move> makeMove(const std::string& name);
const std::vector<std::string>& moveNames();

// Shared helpers (and repairGranularity, from cost/pricing/granularity.h).
// Ops of `ops` with duplicates removed (first occurrence kept).
std::vector<OpId> uniqueOps(const std::vector<OpId>& ops);
// Keeps only retained tensors that the subgraph produces and that are not graph outputs.
void pruneRetain(const Problem& p, SubgraphSched& sg);
// Replaces subgraphs [s, s+count) by the pair (a, b): prunes their retained sets, repairs both
// granularities in context and fills `out`; false if either has no valid granularity.
bool proposePair(IncrementalEvaluator& ev, int s, int count, SubgraphSched a, SubgraphSched b, Change& out);
// A and B as one subgraph: A's ops then B's (an op in both once), retaining `retain` pruned to
// what it may retain; granularity and traversal are left to the caller (merge, fuse).
SubgraphSched unionOf(const Problem& p, const SubgraphSched& a, const SubgraphSched& b, std::vector<TensorId> retain);
// Width and height of subgraph s's output grid: the shape of its first written tensor (else
// retained, else its last op's output); every output of a subgraph has that shape.
std::pair<i64, i64> outputShape(const IncrementalEvaluator& ev, int s);
// Sets sg.gran to the cheapest (in context rin) of `grans`, each repaired; false if none is valid.
bool bestRepairedOf(IncrementalEvaluator& ev, SubgraphSched& sg, const std::vector<TensorId>& rin,
                    const std::vector<Granularity>& grans);

}  // namespace mlsys
