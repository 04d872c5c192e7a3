// A lower bound on the latency of any valid schedule (issue 13: the ruler).
//
// Every valid schedule is a list of subgraphs; its latency is the sum of theirs, and a
// subgraph's latency is at least max(its total compute, its total traffic / B) (L1, L2: a sum of
// step maxima is at least the maximum of the sums). The bound prices op sets ("parts") by a floor
// that any subgraph with those ops must pay (partFloor), and combines the parts soundly:
// - every subgraph lies inside one *fusion component*: its ops are linked by tensors produced and
//   consumed inside it (V4), and a tensor that no valid subgraph can keep inside (a Pointwise
//   producing the operand of a MatMul with K > N, V9) never links two ops of one subgraph;
// - in a component of at most BoundOptions::max_cover_ops ops, the cheapest *cover* of its ops by
//   connected parts (parts may overlap: recomputation, V2) is a lower bound on what the
//   component's subgraphs cost (method "cover");
// - in a larger component the floor is max(its ops' compute, its forced traffic) (method
//   "floors"), raised by edge floors and by the share bound (shares.cpp: a share per op
//   that every valid subgraph pays, the dual of the cover without enumerating parts).
// The total is the sum over components, never less than the old global floors (compute, traffic).
// The arguments are stated next to the code in ruler.cpp (the components, the priced passes),
// part_floor.cpp (the floor of one part), forced_ops.cpp (forced ops), shares.cpp (the
// share bound) and in ARCHITECTURE.md ("The lower bound").
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "cost/bound/args.h"
#include "cost/model/model.h"
#include "cost/model/problem.h"
#include "cost/model/schedule.h"

namespace mlsys {

struct BoundOptions {
  int max_cover_ops = 20;  // components up to this many ops get the exact cover (a dp over 2^n sets)
  int share_parts = 24;    // an op with at most this many possible parts is closed (shares.cpp)
  long max_parts = 20000;  // connected parts enumerated per component, else "floors"
  long lp_parts = 300000;  // sets grown for a group's linear relaxation (lp_relaxation.cpp), else none; 0: off
  // The large-parts relaxation (lp_relaxation.cpp, boundedRelaxation) of each component of at least
  // large_from ops without an exact cover: its parts of at most K ops listed, K = 4, 5, ... up to
  // large_part_ops while the time lasts (a component stops when all its ops are large, or at K = 5
  // with nothing above its shares), at most large_parts sets grown per round (0: off).
  int large_from = 65;
  int large_part_ops = 8;
  long large_parts = 1'000'000;
  BoundArgs args;                 // the arguments switched off (args.h: `bound --without ARG`)
  std::function<bool()> give_up;  // when it returns true, the remaining groups get "floors" (fast)
  // The anytime bound: called with each value proven so far, rising (the global floors, then the
  // quick floors of every component, then each component as the first pass refines it, the
  // shares, the priced passes, the relaxations); the last call is the returned value().
  std::function<void(double)> on_value;
  // When it returns true the caller is ending (a signal, the run's end): the steps left are
  // skipped and the components not yet priced keep their quick floors, as published (give_up
  // still prices them with their groups' floors, which took 0.4 s on 200,000 ops).
  std::function<bool()> stop_now;
};

// The floor of one part: every subgraph whose op set is `ops` has latency >= value, whatever its
// granularity, traversal and retention. value is +infinity when no granularity is valid for it.
// Retention is priced side by side: each tensor that crosses the part's border (a boundary input
// some op produces, an output written for a later consumer) either moves (its loads or its store)
// or stays in fast memory (V6, W1: |t| in the working set all through the part), whichever the
// floor finds cheaper at each granularity; `retained` lists the ones it kept.
//
// Tying the two sides (a Lagrangian argument): in every schedule each tensor is retained into a
// subgraph at most as often as it is retained out of the one before (V6: one boundary), so for any
// prices >= 0, sum over subgraphs of price x (kept in - kept out) <= 0, and adding it to the
// subgraphs' floors keeps the sum a lower bound. With prices, keeping a tensor in costs its price
// and keeping it out earns it; `retention` is that term at the floor (already in `value`).
using RetentionPrices = std::vector<double>;  // per tensor id; empty: all 0
struct PartFloor {
  double value = 0;
  double compute = 0, traffic = 0;  // at the granularity that gives the floor (seconds-free units)
  Granularity g;                    // that granularity (the floor is a minimum over all of them)
  std::vector<TensorId> retained;   // crossing tensors kept in fast memory at that granularity
  double retention = 0;             // the prices' term, included in value
};
// `stop` (when set) is polled once per class of tile counts: past it the floor is 0 (every
// subgraph pays that), so a caller that stops gets a weaker but sound figure at once.
PartFloor partFloor(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                    const RetentionPrices* prices = nullptr, const BoundArgs& args = {},
                    const std::function<bool()>* stop = nullptr);

// The ops of a part that every schedule running the part as a subgraph also ran in an earlier
// subgraph: those from which a path leaves the part and comes back (coverMasks in
// forced_ops.cpp states the argument). Sorted. The cover counts a part only for its other ops. This is the plain
// definition (searches over the whole graph), which the tests hold the cover's fast masks to.
std::vector<OpId> forcedOps(const Problem& p, const std::vector<OpId>& part);

// How a group's floor was found.
enum class BoundMethod : uint8_t {
  Cover,   // "cover"   the cheapest cover of its ops by connected parts
  Floors,  // "floors"  max(its ops' compute, its forced traffic)
  Lp,      // "lp"      the cover's linear relaxation over every valid part (a group of up to 64 ops)
};
// The name printed by `bound` and in `bound --json`: "cover", "floors", "lp".
inline const char* boundMethodName(BoundMethod m) {
  switch (m) {
    case BoundMethod::Cover: return "cover";
    case BoundMethod::Floors: return "floors";
    case BoundMethod::Lp: return "lp";
  }
  return "?";
}

// One part of a cheapest cover, with what priced it (bound --json lists these).
struct CoverPart {
  std::vector<OpId> ops;
  PartFloor floor;  // its floor, and the granularity and sums that give it
  // The ops of the part that every schedule running it also ran before it (forced: a path leaves
  // the part and comes back); the part counts as covering only its other ops.
  std::vector<OpId> recomputed;
  double weight = 1;  // its weight in the cover: 1 in the exact one, a fraction in the linear relaxation ("lp")
};

// A group of ops that every subgraph of theirs stays inside, and its floor.
struct BoundGroup {
  std::vector<OpId> ops;
  BoundMethod method = BoundMethod::Floors;
  double value = 0;
  long parts = 0;                // connected parts priced (cover, lp)
  std::vector<CoverPart> cover;  // the cheapest cover's parts (lp: the relaxed cover's, weighted)
};

// A fusion component: value = min(sum of its groups, edge_floor). The groups are what is left
// when the edges with an edge floor are cut; a subgraph that keeps such an edge inside pays at
// least edge_floor (infinite when there is none).
// value is also at least `shares` (the share bound, shares.cpp) when that is larger, for
// components beyond the exact cover.
struct BoundComponent {
  std::vector<OpId> ops;
  std::vector<BoundGroup> groups;
  double edge_floor = 0;
  double value = 0;
  double shares = 0;              // the share bound (0: not computed)
  int closed_ops = 0;             // its ops all of whose parts the share bound listed
  int pressure_inputs = 0;        // graph inputs whose loads it shares by the pressure argument
  int joint_ops = 0;              // open MatMuls it prices by their joint floor (compute and loads)
  int store_ops = 0;              // open ops charged the store of an output they force
  std::vector<double> op_shares;  // each op's share (the order of ops): every valid subgraph pays its ops' shares
  double shares_s = 0;            // time it took, seconds
  bool by_shares = false;         // value is the share bound (above the groups' and the edge floor)
  double large_parts = 0;         // the large-parts relaxation (0: not computed)
  bool by_large_parts = false;    // value is the large-parts relaxation (above all of the above)
};

struct LowerBound {
  double compute = 0;  // sum over ops of base_cost per native tile of the smallest grid it can be charged on
  double traffic = 0;  // graph inputs loaded once + graph outputs stored once, / bandwidth
  double parts = 0;    // sum over fusion components (see above)
  std::vector<BoundComponent> components;
  // Where the time went (wall clock, seconds): the global floors and the components' edges, the
  // first pass over the components, the priced passes (and how many ran).
  struct Timing {
    double floors_s = 0, components_s = 0, prices_s = 0, shares_s = 0, lp_s = 0;
    int price_passes = 0;
  } timing;
  double value() const;
};

LowerBound lowerBound(const Problem& p, const ModelOptions& m, const BoundOptions& o = {});

// Per op, the fewest native tiles of any grid it can be charged on in a valid subgraph (every
// run of it, recomputed or not, costs base_cost per tile of that grid), those summed over all
// its runs (total_tiles: the compute floor is base_cost x total_tiles), and the least K among it
// and the MatMuls it can feed inside a subgraph (the native_depth factor K/N of a MatMul). The
// argument is in compute_floor.cpp. (Tried as the exact solver's per-op heuristic: on mlsys-2026-5 its lower bound
// after 120 s rose only from 522,101.87 to 522,148.80; the retained-set transitions, not the heuristic, bound that
// search.)
struct OpComputeFloor {
  std::vector<i64> min_tiles, min_k;
  // Per op, the fewest native tiles summed over all its runs (recomputations included): at least
  // min_tiles, more where its output has consumers whose grids are larger (compute_floor.cpp).
  std::vector<i64> total_tiles;
  // Whether some valid subgraph could hold a path from the op's output to a MatMul (through
  // Pointwise ops): only then can the op be upstream (E2). False means it accumulates in every
  // subgraph, on the grid of its own output.
  std::vector<char> may_feed_matmul;
  // Per MatMul (compute_floor.cpp states the argument): whether it accumulates in every valid
  // subgraph holding it (a Pointwise path from its output always reaches O(S)); whether a valid
  // subgraph in which it accumulates could still carry its output to a MatMul; and the fewest
  // native tiles of a grid on which it is upstream (max when it never is). Other ops: 0, 1, max.
  std::vector<char> always_accumulates, feeds_matmul_accumulating;
  std::vector<i64> min_tiles_upstream;
  // Per MatMul whose walk to the first MatMuls its output reaches (through fusable edges and
  // Pointwise ops) was complete: bit 0 when one of them reads it (so made from it) as its LHS, bit 1
  // as its RHS; 3 when the walk stopped early (upstream-reloads, shares.h).
  std::vector<unsigned char> upstream_roles;
};
OpComputeFloor opComputeFloor(const Problem& p, const ModelOptions& m);

// What each argument that is on gives the bound (attribution.cpp): the bound and each
// component's value less their values with that one argument off (leave one out), in
// BoundArg order. complete is false when bo.give_up fired before every argument was tried.
struct BoundAttribution {
  bool complete = false;
  std::vector<std::pair<BoundArg, double>> total_raise;
  std::vector<std::vector<std::pair<BoundArg, double>>> component_raise;  // per component of the full bound
};
BoundAttribution attributeBound(const Problem& p, const ModelOptions& m, const BoundOptions& bo,
                                const LowerBound& full);

// The arguments that each alone hold the bound above `latency` (a valid schedule's): the bound
// with one of them off is at or below it (1e-9 relative). Empty when none alone does (several
// together) or bo.give_up fired first (`complete` false then).
struct BoundSuspects {
  bool complete = false;
  std::vector<BoundArg> args;
};
BoundSuspects boundSuspects(const Problem& p, const ModelOptions& m, const BoundOptions& bo, double latency);

// Proven optimal by the bound: the latency is within floating-point noise of it.
bool meetsBound(double latency, double bound);

}  // namespace mlsys
