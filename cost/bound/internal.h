// Internal to the lower bound (cost/bound/ruler.cpp, the component bound; cost/bound/part_floor.cpp, the
// floor of one part): what both files price with.
#pragma once
#include <algorithm>
#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "cost/bound/bound.h"
#include "cost/model/problem.h"

namespace mlsys::bound_detail {

using LD = long double;

// A tensor is *retainable* when some schedule could keep it in fast memory across a boundary:
// only produced tensors (V6: never graph inputs), never graph outputs (V7), and only if it fits
// beside something: a subgraph S that t is retained into counts |t| in full in every step's working
// set (W1), and also the tile region (at least one element) of each non-retained output of S, or
// the whole of each retained one; S has an output (the last of its ops in topological order, V3,
// makes a tensor no op of S reads: O(S) is never empty). So |t| + 1 <= C: a tensor of exactly the
// capacity (a 2048 x 512 activation in 1 Mi of fast memory) is never retained. The bound lets every
// retainable tensor cross every boundary for free (no store in its producer's subgraph, no load in
// its consumer's): a relaxation, so sound; it costs tightness only where capacity allows retention.
inline bool retainable(const Problem& p, TensorId t) {
  return !p.is_graph_input[t] && !p.is_graph_output[t] && p.size(t) < p.capacity;
}

// The fewest tiles (w, h <= N: V8) of a grid with t's shape.
inline i64 nativeTiles(const Problem& p, TensorId t) {
  const i64 N = p.native;
  return ((p.widths[t] + N - 1) / N) * ((p.heights[t] + N - 1) / N);
}

// The ops each part (bit j: ops[j], a group in topological order) counts as covering: its ops
// less the forced ones (forced_ops.cpp states the argument).
// `stop` (when set) is polled every 1,024 parts: past it the plain masks (every op counted).
std::vector<uint32_t> coverMasks(const Problem& p, const std::vector<OpId>& ops, const std::vector<uint32_t>& parts,
                                 const std::function<bool()>& stop = {});
std::vector<uint64_t> coverMasks(const Problem& p, const std::vector<OpId>& ops, const std::vector<uint64_t>& parts,
                                 const std::function<bool()>& stop = {});
// The same for parts given as lists of local indices (sorted), for groups of any size: each part's
// search is bounded by its topological window (an op between lies between its first and last op).
std::vector<std::vector<int32_t>> coverMasks(const Problem& p, const std::vector<OpId>& ops,
                                             const std::vector<std::vector<int32_t>>& parts,
                                             const std::function<bool()>& stop = {});
// The readers of o's one output when it cannot be retained and has two readers or more (sorted,
// distinct), else none: the pairs the readers argument serves (readers.cpp).
std::vector<OpId> servedReaders(const Problem& p, OpId o);
// The bits beyond the ops' that each part serves: pairs (op, reader) of an output that cannot be
// retained (forced_ops.cpp states it); returns how many bits, n + bits <= maxBits.
int readerMasks(const Problem& p, const std::vector<OpId>& ops, const std::vector<uint32_t>& parts, int maxBits,
                std::vector<uint32_t>& served);

// Retention in (+1) and out (-1) per tensor over the cover parts of `components`.
std::vector<int> keptBalance(const Problem& p, const std::vector<BoundComponent>& components);

// V9 under the model's k limit: whether producer -> consumer can lie inside one subgraph
// (compute_floor.cpp).
bool fusableEdge(const Problem& p, const ModelOptions& m, OpId producer, OpId consumer);

// The share bound of one fusion component (shares.cpp states the argument): a share per op
// that every valid subgraph pays for its ops, summed. `ops` in topological order, `adj` the
// fusable neighbours of every op (with their edge floors, unused here), `opCompute` each op's
// compute floor; an op with more than `maxParts` possible parts is open.
struct ShareBound {
  LD value = 0;
  int closed = 0;             // ops all of whose possible parts were listed and priced
  int pressure_inputs = 0;    // graph inputs attributed by the pressure argument
  int joint_ops = 0;          // open MatMuls priced by their joint floor
  int store_ops = 0;          // open ops charged a forced store
  std::vector<LD> op_shares;  // per op of the component (its order): its share y_o
};
// A MatMul's (compute, loads of its claimed operands) at every tile and k class that fits, as a
// Pareto frontier (joint_floors.cpp states the argument; the share bound uses it).
struct JointPoint {
  LD compute, loads;
};
// claimed: {LHS, RHS} always loaded for o; shared: that side's tensor has other readers too,
// whose slices might coincide with o's k-strips in other steps (its nk > 1 loads count once).
// step_floor: the least over every tile and k class of the larger of compute, loads / B and the
// step-by-step floor of the claimed bands (nk = 1), which every subgraph pays for the ops of one
// frontier that it holds, counted once each. stores: every valid subgraph holding o writes, in
// each step, the tile's region of an output (forcedOutputs lists none that can be retained); the
// step floors then count that store, shared among the frontier's ops that fit side by side.
struct JointFrontier {
  std::vector<JointPoint> points;
  std::vector<JointPoint> points_one;  // the same over the nk = 1 classes only
  // step-mixtures: the nk > 1 classes alone, their loads without the shared sides' (any_loads, the
  // same at every point: those sides once), which fall into the k-steps as the compute does, by
  // |k_j| / K; the last k-step of a tile takes at most f_max of each (share_modes.cpp).
  std::vector<JointPoint> points_k;
  LD any_loads = 0, f_max = 0;
  LD step_floor = std::numeric_limits<LD>::infinity();
  std::array<bool, 2> claimed{false, false}, shared{false, false};  // as jointFrontier was given them
  std::array<i64, 2> readers{1, 1};                                 // likewise
  bool stores = false;
  // epilogue-tiles (joint_floors.cpp): the nk > 1 points where o's output is written (the constant
  // lambdas add its store: SharePricing::written_store) and where it is ephemeral (more tiles held);
  // both empty without the argument.
  std::vector<JointPoint> points_written, points_ephemeral;
  int kind = -1;  // the frontiers of one kind differ in their epilogue points only (one step floor, ...)
};
// epilogue-tiles (joint_floors.cpp states the argument): on, where no valid subgraph can retain o's
// output; tiles, the tiles of h x w a step of the first tile holds at nk > 1 where that output is
// ephemeral (0: it never is).
struct JointEpilogue {
  bool on = false;
  i64 tiles = 0;
  auto operator<=>(const JointEpilogue&) const = default;
};
// readers: per shared side, 1 to count its band once at nk > 1, or n > 1 (shared-claims) to count
// each tile's strips over n readers (joint_floors.cpp).
JointFrontier jointFrontier(const Problem& p, const ModelOptions& m, OpId o, std::array<bool, 2> claimed,
                            std::array<bool, 2> shared, bool stores, std::array<i64, 2> readers = {1, 1},
                            JointEpilogue epilogue = {});
inline bool isMatMul(const Problem& p, OpId o) { return p.ops[o].type == OpType::MatMul; }

// The ops one search has visited, marked in a per-op array shared by all searches (cleared on
// destruction, so each search costs what it visits).
class Marks {
 public:
  Marks(std::vector<char>& mark, OpId first) : mark_(mark) { add(first); }
  ~Marks() {
    for (OpId v : visited_) mark_[v] = 0;
  }
  Marks(const Marks&) = delete;
  Marks& operator=(const Marks&) = delete;
  bool add(OpId v) {  // false when already visited
    if (mark_[v]) return false;
    mark_[v] = 1;
    visited_.push_back(v);
    return true;
  }
  size_t size() const { return visited_.size(); }

 private:
  std::vector<char>& mark_;
  std::vector<OpId> visited_;
};

// The least loads of row bands (those slices that depend on the tile row only) and column bands
// beyond one load of each, over every traversal of nth x ntw tiles, given the size of a full
// and of the last (clipped) band of each kind (joint_floors.cpp states the argument).
LD bandReloads(LD rowFull, LD rowLast, LD colFull, LD colLast, i64 nth, i64 ntw);
// The least excess over theta of the bands that runs of tiles start, nk = 1, over every
// traversal (sizes in time; joint_floors.cpp states the argument).
LD runExcess(LD rowFull, LD rowLast, LD colFull, LD colLast, i64 nth, i64 ntw, LD theta, bool firstStep = true);
// The run starts' excess over steps of several kinds (count, store sigma_i), compute u a step:
// a step of kind i pays max(0, b - theta_i) beyond max(u, sigma_i) for the bands b it starts,
// theta_i = max(0, u - sigma_i), which is at least max(0, b - t) - max(0, theta_i - t) for any t.
// So the steps pay at least excessAt(t) - sum_i count_i max(0, theta_i - t) (excessAt: the run
// accounting at one theta, runExcess); the best t among the kinds' thetas (the kind with the
// least store loses nothing).
// kinds: (count, store) pairs; excessAt(theta): the run accounting at one theta (runExcess).
template <class ExcessAt, class Kinds>
LD kindsExcess(const ExcessAt& excessAt, const Kinds& kinds, LD u) {
  LD best = 0;
  for (size_t i = 0; i < kinds.size(); ++i) {
    const LD t = std::max<LD>(0, u - kinds[i].second);
    bool tried = false;  // (any t is valid: each kind's is tried once)
    for (size_t j = 0; j < i && !tried; ++j) tried = std::max<LD>(0, u - kinds[j].second) == t;
    if (tried) continue;
    LD lost = 0;
    for (const auto& [count, sigma] : kinds) lost += count * std::max<LD>(0, std::max<LD>(0, u - sigma) - t);
    best = std::max(best, excessAt(t) - lost);
  }
  return best;
}
// One tile and k class of a joint MatMul that fits with its claimed slices (joint_floors.cpp):
// compute, loads of the claimed sides (elements), the larger of compute and loads / B (with the
// stores), and (stepFloor) with nk = 1 the step-by-step floor; with nk = 1 also the claimed bands per run start (time),
// how many such MatMuls fit side by side in fast memory (their claimed bands are distinct tensors) and the store per
// step that each of them takes at the least (time; 0 without forced stores).
struct JointCfg {
  LD compute = 0, loads = 0, steps = 0, perTile = 0;
  LD memory = 0;        // loads / B, and with forced stores (nk = 1) the stores: what each op's steps transfer at least
  LD shared_loads = 0;  // nk > 1: the part of loads on shared sides (they may fall in any step)
  i64 tiles = 0, nth = 0, ntw = 0, together = 1;
  bool one = false;                     // nk = 1
  i64 tile = 0, ws = 0;                 // nk = 1: h w, and the working set of the bands and an output tile
  std::array<LD, 4> bands{0, 0, 0, 0};  // row full, row last, column full, column last
  std::array<LD, 4> store{0, 0, 0, 0};  // per tile: full, last column, last row, corner
  LD excess(LD theta, bool firstStep = true) const {
    return runExcess(bands[0], bands[1], bands[2], bands[3], nth, ntw, theta, firstStep);
  }
  // nk = 1, step by step, each of `together` such ops computing u per tile (joint_floors.cpp).
  LD stepwise(LD u, bool convex = false) const;
  // stepwise's tile kinds (count, store per tile), and its sum over them of count x max(u, store),
  // at most stepwise (its run excess is at least 0).
  std::array<std::pair<LD, LD>, 4> kinds() const;
  LD perKind(LD u) const;
  // The floor every subgraph pays per such op at this class: steps (the larger of compute and
  // loads / B with the stores), and with nk = 1 stepwise(perTile).
  // (Without the first step's joint excess: step mode needs stepwise convex, joint_floors.cpp.)
  LD stepFloor() const { return one ? std::max(steps, stepwise(perTile, true)) : steps; }
};
// held: the tiles of h x w a step holds at nk > 1 beside the claimed strips (1: the accumulator);
// kOnly: the nk > 1 classes alone.
void forEachJointCfg(const Problem& p, const ModelOptions& m, OpId o, std::array<bool, 2> claimed,
                     std::array<bool, 2> shared, bool stores, std::array<i64, 2> readers,
                     const std::function<void(const JointCfg&)>& visit, i64 held = 1, bool kOnly = false);
// A Pointwise op beside a class: its compute per tile cx, the class's reference compute cref
// (which chooses the term at each granularity), and, when its output has the class's grid, the
// tile slices of tensors S must hold to make its inputs (besideOf, beside.cpp).
struct Beside {
  LD cx = 0, cref = 0;
  // The tile slices S must hold for its inputs when at most k of the class's ops are in S:
  // slices[min(k, size - 1)] (empty: none known).
  std::vector<i64> slices;
  // The ops one of which S must hold for no slice at all, unless free (besideOf).
  std::vector<OpId> needs;
  bool free = false;
  // The tensors of its input tree (one of which S loads when x takes a slice).
  std::vector<TensorId> tree;
  // Every S holding it and an op of the class runs at nk = 1 (SharePricing::fed).
  bool nkOne = false;
  i64 slicesAt(i64 k) const {
    return slices.empty() ? 0 : slices[static_cast<size_t>(std::min<i64>(k, static_cast<i64>(slices.size()) - 1))];
  }
  auto key() const { return std::make_tuple(cx, cref, slices, nkOne); }
};
// The share of Pointwise op x beside step-priced joint MatMuls of o's frontier f, each taking
// its step floor, n such Pointwise ops at most (joint_floors.cpp).
// Where s tile slices fit beside the class, the Pointwise ops of S are at most M most + free +
// s perSlot (M: the class's ops that fit side by side), and at nk > 1 at most n - nkOne
// (besideStep states both).
struct Crowd {
  // Per number k of the class's ops in S (the last for more): the most Pointwise ops that need
  // one given op of the class, and the free ones; unknown: those whose slices are unknown;
  // perSlot: the most known ones with one tensor in their input trees; nkOne: those that are
  // never in S beside the class at nk > 1 (Beside::nkOne).
  static constexpr size_t kSlots = 10;  // beyond besideOf's slot counts
  std::vector<i64> most, free;
  i64 unknown = 0, perSlot = 0, nkOne = 0;
  i64 bound(i64 M, i64 slots) const {
    if (most.empty()) return unknown;
    const size_t k = static_cast<size_t>(std::min<i64>(M, static_cast<i64>(most.size()) - 1));
    return M * most[k] + free[k] + unknown + slots * perSlot;
  }
  auto key() const { return std::make_tuple(most, free, unknown, perSlot, nkOne); }
};
// What besideStepShare reads of one class (its frontier, count n, Crowd and reference compute
// cref): per granularity that the frontier's ops fit (forEachJointCfg), the term the reference
// compute chooses there and the constants of the shares (joint_floors.cpp). Only whether a
// Pointwise op fits and its own compute are left to each op: built once per class, not per op.
struct BesideStepRow {
  JointCfg c;
  LD nn = 1, F = 0;
  int term = -1;  // -1: no term holds at this granularity (the op's share there is 0)
};
struct BesideStepRows {
  LD y = 0;  // the class's step floor
  std::vector<BesideStepRow> rows;
};
// What two share pricings of one component may share (ruler.cpp prices a component with and
// without upstream-joint): the joint frontiers, which depend only on their key, and the step-mode
// shares beside a class, which depend only on the frontier and what besideStepShare reads.
struct ShareMemo {
  std::map<std::tuple<i64, i64, i64, i64, int, int, bool, JointEpilogue>, JointFrontier> frontiers;  // stable addresses
  std::map<std::tuple<i64, i64, i64, i64, int, int, bool>, int> kinds;  // JointFrontier::kind
  std::map<std::tuple<const JointFrontier*, i64, decltype(Crowd{}.key()), decltype(Beside{}.key())>, LD> beside;
};
BesideStepRows besideStepRows(const Problem& p, const ModelOptions& m, OpId o, const JointFrontier& f, LD cref, i64 n,
                              const Crowd& crowd);
LD besideStepShare(const Problem& p, const BesideStepRows& rows, const Beside& x);

// The least share of each load of a graph input that m >= 2 alike readers in one subgraph pay,
// with the reloads of their consumers' other operands (rhsReload, elements; pressure.cpp);
// 0 when the readers differ.
LD gridPressure(const Problem& p, const std::vector<OpId>& readers, const std::function<LD(OpId)>& rhsReload);

// The linear relaxation of the cheapest cover over every valid connected part of a group of at
// most 64 ops (lp_relaxation.cpp states the argument); around[j]: the group's ops adjacent to ops[j]
// as a mask.
// done is false when the parts are more than maxVisited, the time ran out or the solver failed.
struct LpCover {
  bool done = false;
  LD value = 0;
  std::vector<LD> shares;         // per op of the group: its y
  std::vector<LD> reader_shares;  // per reader element (readerElements), with "readers": its y
  long visited = 0, parts = 0;
  int large = 0;  // boundedRelaxation: the large ops
  struct Part {
    std::vector<OpId> ops;
    double weight = 0, floor = 0;
  };
  std::vector<Part> cover;  // the parts with a positive weight in the relaxed cover
};
// The readers argument's elements in the relaxation (readers.cpp, lp_relaxation.cpp): per part,
// the elements it serves, numbered from ops.size(); `elements` is set to how many there are (with no
// parts: how many reader bits the group's makers need in all, which readerMasks keeps while they fit).
std::vector<std::vector<int32_t>> readerElements(const Problem& p, const std::vector<OpId>& ops,
                                                 const std::vector<uint64_t>& parts, int& elements);
LpCover lpCover(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                const std::vector<uint64_t>& around, const std::vector<LD>& opCompute, long maxVisited,
                const std::function<bool()>& stop, const BoundArgs& args = {});
// An op's compute per native tile of its output grid: base_cost, x K/N for the least K at or
// downstream of a MatMul under native_depth (global_floors.cpp; x f.min_tiles: its share unit).
LD computePerTile(const Problem& p, const ModelOptions& m, const OpComputeFloor& f, OpId o);

// NOT a lower bound: the same relaxation over the valid parts of at most maxPartOps ops only (a group
// of any size; around[j]: the local indices of the group's ops adjacent to ops[j]; every part counts
// for all its ops). Listing the larger parts too could only lower it, so it is an upper limit of
// what the cover's relaxation could certify, close to it where large parts are dear. Diagnostics
// only (bench/relaxation_estimate.cpp: how much of a gap the bound could at best recover); the
// bound never calls it.
LpCover relaxationEstimate(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                           const std::vector<std::vector<int32_t>>& around, const std::vector<LD>& opCompute,
                           int maxPartOps, long maxVisited, const std::function<bool()>& stop);

// A lower bound for a group of any size (lp_relaxation.cpp, boundedRelaxation): the relaxation
// over its valid parts of at most maxPartOps ops, where an op in a valid part of maxPartOps + 1
// ops takes at most its share from the share bound (shares, per op of the group) and a reader
// element of such a maker none; `known` (when set) keeps the part floors it prices, by their ops, for
// the next call. done is false when the parts are more than maxVisited, the time
// ran out or the solver failed.
LpCover boundedRelaxation(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                          const std::vector<std::vector<int32_t>>& around, const std::vector<LD>& opCompute,
                          int maxPartOps, const std::vector<LD>& shares, long maxVisited,
                          const std::function<bool()>& stop, const BoundArgs& args = {},
                          std::map<std::vector<OpId>, LD>* known = nullptr);

// boundedRelaxation's pieces (relaxations.cpp): the result when every op is large (the shares),
// and the caps per column (ops, then reader elements; empty without shares).
LpCover sharesOnly(const std::vector<LD>& shares);
std::vector<LD> capsOf(const std::vector<char>& large, const std::vector<LD>* shares,
                       const std::vector<int32_t>& makerOf, int elements);

// Upward closed invalidity of a part S (`in` marks its ops): forced_shapes.cpp states it.
bool forcedInvalid(const Problem& p, const std::vector<char>& in, const std::vector<OpId>& S);

// Output shapes (width, height) one of which every valid subgraph holding v has among its
// non-ephemeral outputs, sorted; nullopt when unknown (forced_shapes.cpp states the argument).
using Shape = std::pair<i64, i64>;
// With kSplit > 0: for the valid subgraphs with k < kSplit only.
std::optional<std::vector<Shape>> forcedShapes(const Problem& p, OpId v, i64 kSplit = 0);
// Tensors one of which every valid subgraph holding v writes or retains (forced_shapes.cpp).
std::optional<std::vector<TensorId>> forcedOutputs(const Problem& p, OpId v);
// False when two ops with these forced shapes can never be in one valid subgraph.
bool mayShareSubgraph(const std::optional<std::vector<Shape>>& a, const std::optional<std::vector<Shape>>& b);

// What the share bound's mixtures are chosen over (share_modes.cpp states the argument).
// Thrown when the share bound's caller stops it mid-way: the component then gets no shares (0,
// which every subgraph pays), never a half-built share vector.
struct SharesStopped {};
struct SharePricing {
  const std::vector<OpId>& ops;              // the component, in topological order
  LD B;                                      // the bandwidth
  std::vector<char> open;                    // per op
  std::vector<LD> compute;                   // per op: its compute floor
  std::vector<LD> traffic;                   // per open op: the elements of graph-input loads attributed to it
  std::vector<const JointFrontier*> joint;   // per joint op: its frontier
  std::vector<int> joint_class;              // per op: its class, or -1 if not joint
  std::vector<OpId> class_first;             // per class: its first op
  std::vector<char> class_single_kind;       // per class: all its ops have one frontier
  std::vector<std::vector<int>> meets;       // per open op not joint: the classes it may meet
  std::vector<std::vector<LD>> beside_step;  // per such op, per class it meets: its share beside it in step mode
  std::vector<std::vector<std::pair<LD, std::vector<OpId>>>> parts;  // per closed op: floor, ops
  std::vector<std::vector<LD>> meets_compute;  // per such op, per class it meets: its compute floor beside it
  std::vector<LD> free_compute;                // per such op: its compute floor with no joint op beside it
  std::vector<std::vector<LD>> meets_loads;    // per such op, per class it meets: its forced input loads beside it
  std::vector<LD> free_loads;                  // per such op: its forced input loads with no joint op beside it
  // per such op, per class it meets: the joint ops one of which it forces to nk = 1 in any S
  // holding it and the class, each with how many Pointwise ops make its operands (besideFed)
  std::vector<std::vector<std::vector<std::pair<OpId, int>>>> fed;
  // per joint op that may be upstream in some valid S (*upstream-capable*; inf compute where it never
  // is): its compute floor and its loads (time) there, and the classes whose S it may be in there.
  // Such an op may be in S, upstream, beside any of those classes or none: it tells nothing of S's
  // context (contextClass), and its class prices no step mode (class_step).
  std::vector<LD> up_compute, up_loads;
  std::vector<std::vector<int>> up_meets;
  std::vector<char> class_step;  // per class: step mode allowed (single kind, no upstream-capable op)
  // step-mixtures: per op, a Pointwise that no valid S carries to a MatMul (it computes in a tile's
  // last k-step only, A-4); whether the classes may take split modes; the test seam's mode (-1: none).
  std::vector<char> last_only;
  // epilogue-tiles: per joint op, the elements of its output's store that its written points add
  // in the constant-lambda modes (beyond its forced store; 0 where another op's claim holds it).
  std::vector<LD> written_store;
  bool split_modes = true;
  int forced_split = -1;
  bool check_trials = false;  // test seam (BoundArgs::check_share_trials)
  bool upstreamCapable(OpId o) const { return up_compute[o] < std::numeric_limits<LD>::infinity(); }
  // The class that o's presence in S tells S is beside: its class for a joint op that always
  // accumulates, else -1 (an op that is not joint, or one that may be upstream there).
  int contextClass(OpId o) const { return upstreamCapable(o) ? -1 : joint_class[o]; }
  // The caller's stop, polled in every loop over the component (poll() throws SharesStopped).
  std::function<bool()> stop{};
  void poll() const {
    if (stop && stop()) throw SharesStopped{};
  }
};
// The greatest total of shares found over the classes' mixtures.
LD bestShareTotal(const SharePricing& sp, std::vector<LD>* shares = nullptr);  // shares: per op, at the best
// The SharePricing entries of the ops beside the classes (beside.cpp states the arguments).
void besideStep(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops, const std::vector<char>& claimed,
                const std::vector<std::vector<OpId>>& claimer, SharePricing& sp, const std::function<bool()>& stop,
                ShareMemo& memo);
void besideCompute(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& inComp, SharePricing& sp);
void besideLoads(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& claimed, SharePricing& sp);
void besideFed(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& inComp, SharePricing& sp,
               const std::function<const std::optional<std::vector<Shape>>&(OpId)>& shapesOf);

// The share bound's retention prices (share_prices.cpp states the argument): per priced
// tensor its open readers, who take its load (attributePrices: sign +1 adds it, -1 takes it back);
// partsPaid: whether every listed part's floor covers its ops' shares (shares in ops' order).
struct PricedTensor {
  TensorId t;
  std::vector<OpId> readers;
};
RetentionPrices retentionPrices(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& open,
                                const std::vector<char>& inComp, std::vector<PricedTensor>& priced);
void closedLoads(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& open,
                 const std::vector<char>& inComp, const std::vector<char>& claimed, std::vector<PricedTensor>& priced,
                 std::vector<PricedTensor>& beside);
void closedClaimedLoads(const Problem& p, const std::vector<PricedTensor>& beside,
                        const std::vector<std::vector<OpId>>& claimer, SharePricing& sp, int sign);
void attributePrices(const Problem& p, const std::vector<PricedTensor>& priced, std::vector<LD>& traffic, int sign);
bool partsPaid(const Problem& p, const std::vector<OpId>& ops, const std::vector<std::vector<std::vector<OpId>>>& parts,
               const std::vector<LD>& shares, const std::map<std::vector<OpId>, LD>& floorOf);

// Per MatMul that may be upstream: the fewest native tiles of a grid where it is (min_tiles_upstream)
// and the roles its output takes in the first MatMuls it reaches (OpComputeFloor::upstream_roles).
struct UpstreamReads {
  i64 tiles = 0;
  unsigned char roles = 3;
};
ShareBound shareBound(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                      const std::vector<std::vector<std::pair<OpId, LD>>>& adj, const std::vector<LD>& opCompute,
                      const std::vector<char>& jointEligible, const std::vector<LD>& upstreamCompute,
                      const std::vector<UpstreamReads>& upstreamReads, const std::vector<char>& feedsNoMatMul,
                      const std::function<bool()>& giveUp, int maxParts, ShareMemo& memo, const BoundArgs& args = {});

}  // namespace mlsys::bound_detail
