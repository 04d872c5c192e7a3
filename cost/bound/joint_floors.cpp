// The joint floor of one MatMul for the share bound (internal.h, jointFrontier; the
// argument that uses it is at the top of shares.cpp).
//
// A MatMul o that accumulates in every subgraph (no valid subgraph carries its output to a
// MatMul: OpComputeFloor::may_feed_matmul), or, with upstream-joint, any valid subgraph where it
// accumulates (none carries its output to a MatMul there: feeds_matmul_accumulating; where it is
// upstream the share bound caps its share instead, share_modes.cpp), runs on the grid of its own output, W x H, at some
// tile w x h <= N x N (V8, E1). At that tile it computes base_cost per tile (L5; x K/N under
// native_depth), and an operand that is always loaded from slow memory for it (a *claimed* side:
// its tensor, or the tensor a chain of one-input Pointwise ops makes it from, is produced outside
// the subgraph and too large to be retained) costs, per the spec's slices (E3, L3):
// - with nk > 1 k-steps: a k-strip of it in every step, so its row band (LHS) in every tile of
//   a tile row, ntw |LHS| in all (its column band, RHS: nth |RHS|); the working set holds the
//   strips and the accumulator, at least h + w + h w at k = 1;
// - with nk = 1 (k >= K): the band itself, rows x [0, K) (LHS) and [0, K) x columns (RHS),
//   reloaded whenever a run of tiles in one row (column) starts (bandReloads states how
//   many, and on which bands, at the least; one side alone: at least itself once); the working
//   set holds h K + K w, and an output tile: o's output, or, when that is ephemeral, its readers
//   (Pointwise ops: o never feeds a MatMul) in S, whose outputs have its shape (F3) and its region
//   (E3); some of them, or o, has a non-ephemeral output, which the working set holds (W1), its
//   first tile h x w whole.
// jointFrontier lists (compute, loads) over every (w, h) and both classes that fit the
// capacity with those slices alone: whatever else a subgraph holds only adds to both.
//
// epilogue-tiles. Where no valid subgraph can retain o's output t (retainable: V6, W1), a valid S
// in which o accumulates with nk > 1 either has t in O(S), so writes all of it (L4: each tile's
// region in its last k-step), or keeps t ephemeral. Then t's readers in S are Pointwise ops
// (o feeds no MatMul where it accumulates), which make t's region R_0, the tile's, and carry it
// to O(S) through Pointwise ops (E2, decision 1; a Pointwise keeps its shape), so a step of the
// first tile (full: w <= W, h <= H; its second k-step, where a strip's columns [k, 2k) or rows
// differ from any tile region's, so no strip is the same slice as a tile) holds, beside the
// claimed strips (h and w at k = 1): t's accumulator (A-12, nk > 1), a tile of O(S) reached from
// t (W1; full |x| >= h w if retained), and, for a reader r of t in S, R_0 of r's other inputs
// from k-step 0 on (decision 4): each graph input among them is a slice of its own (never
// retained: V6); each made by a MatMul q is loaded or retained in, or made in S, then in O(S) (a
// tile) or ephemeral, where q accumulates too (its output reaches O(S) through r) and holds its
// accumulator; one made by a Pointwise before o in the topological order (so not reached
// from t) is again a slice, tile or accumulator of some tensor not reached from t. These are
// tensors other than t and the O(S) tile (neither graph inputs nor MatMul outputs nor before o),
// the graph inputs and MatMul outputs distinct among themselves: at least max(their number, 1 if
// r has another input). So the step holds 2 + min over t's Pointwise readers of that count tiles
// (epilogueOf, share_claims.cpp; 0 without a Pointwise reader: t is never ephemeral where o
// accumulates). jointFrontier lists the nk > 1 points with one tile held (t written) and with
// those tiles (t ephemeral, fewer fitting granularities: more tiles, more reloads); a constant
// lambda's share (share_modes.cpp, epilogueValue) is the least over the nk = 1 points, the
// written points with t's store (unless another op's forced store holds it: writtenStores,
// shares.h), and the ephemeral points. At the same w an ephemeral point has a smaller h than the
// written one, so more compute and loads: the least without the store is the plain frontier's,
// and the argument never lowers a share.
//
// Other readers of a claimed tensor (it stays claimed by o alone: nobody else counts its loads)
// need slices of it too, which could make o's slice resident. With nk = 1 they cannot: o's slice
// is rows x all columns (LHS), and another template is either all columns as well, then on the
// same tile row, hence the same slice as o's in the same step, or never all columns (a whole
// tensor larger than C is never in the working set); so o's run counting stands. With nk > 1 a
// row-and-column slice of another reader may equal o's next k-strip: such a side counts once.
#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>

#include "cost/bound/internal.h"

namespace mlsys::bound_detail {

// The band loads beyond the first of each, with nk = 1, over an R x C grid (R = nth rows of
// tiles, C = ntw columns). Each tile either continues its predecessor's row (then it changes
// column: it starts a run of its column) or its column (then it starts a run of its row), or
// neither, and the first starts both: the runs started add up to at least RC + 1. Each start of a
// row run loads that row's bands (rows x [0, K) of each LHS-like tensor), each start of a column
// run that column's; a row has at most C runs, a column at most R. Beyond one run each, at least
// RC + 1 - R - C = (R - 1)(C - 1) more runs, put on the cheapest bands up to those caps: the last
// (clipped) row band, the R - 1 full ones, and the same for columns.
LD bandReloads(LD rowFull, LD rowLast, LD colFull, LD colLast, i64 nth, i64 ntw) {
  const i64 extra = (nth - 1) * (ntw - 1);
  if (extra <= 0) return 0;
  struct Band {
    LD size;
    i64 capacity;  // elements per load; how many more loads the bands of this kind can take
  };
  Band bands[4] = {
      {rowLast, ntw - 1}, {rowFull, (nth - 1) * (ntw - 1)}, {colLast, nth - 1}, {colFull, (ntw - 1) * (nth - 1)}};
  std::sort(std::begin(bands), std::end(bands), [](const Band& a, const Band& b) { return a.size < b.size; });
  LD sum = 0;
  i64 left = extra;
  for (const Band& b : bands) {
    const i64 take = std::min(left, b.capacity);
    sum += static_cast<LD>(take) * b.size;
    left -= take;
  }
  return sum;
}

// The band excess of the runs of tiles, nk = 1 (each step a tile; sizes in time, one band of
// each kind: rows of a tile row together, and of a tile column; 0 where there are none). A step
// with compute c, stores sigma and started bands b_i costs max(c, sigma + sum b_i) >= max(c,
// sigma) + sum max(0, b_i - theta), theta = max(0, c - sigma) (with x = sum b_i: one b_i above
// theta gives its excess, m of them sum b_i - (m - 1) theta <= x). So beyond max(c, sigma) per tile
// each run start adds its band's excess over theta: every row and every column starts at least one
// run, and (R - 1)(C - 1) more runs fall on the cheapest bands (bandReloads). The first step
// starts the first run of its row and of its column (nothing is resident at a subgraph's first
// step but tensors retained into it, whose bands are not counted here: L3), so it pays
// max(0, r + c - theta) for the two, not e(r) + e(c): the least such gain over the band kinds its
// tile may have is added (firstStep; it is not convex in theta, which besideStepShare needs).
LD runExcess(LD rowFull, LD rowLast, LD colFull, LD colLast, i64 nth, i64 ntw, LD theta, bool firstStep) {
  auto e = [&](LD size) { return std::max<LD>(0, size - theta); };
  const bool rows = rowFull > 0 || rowLast > 0, cols = colFull > 0 || colLast > 0;
  LD sum = 0;
  if (rows) sum += static_cast<LD>(nth - 1) * e(rowFull) + e(rowLast);
  if (cols) sum += static_cast<LD>(ntw - 1) * e(colFull) + e(colLast);
  if (rows && cols) {
    sum += bandReloads(e(rowFull), e(rowLast), e(colFull), e(colLast), nth, ntw);
    if (!firstStep) return sum;
    LD gain = std::numeric_limits<LD>::infinity();
    for (LD r : {rowLast, nth > 1 ? rowFull : rowLast})
      for (LD c : {colLast, ntw > 1 ? colFull : colLast}) gain = std::min(gain, e(r + c) - e(r) - e(c));
    sum += std::max<LD>(0, gain);
  }
  return sum;
}

// The step-by-step floor at compute u per tile, nk = 1, of each of m <= M (`together`) ops of one
// frontier in a subgraph S (their claimed bands are distinct tensors). A step loads m sum b of
// claimed bands, computes at least m u, and, with forced stores, writes its tile's region sigma
// of an output once for all m: it costs at least max(m u, m sum b + sigma) >= m max(u, s + sum b)
// with s = sigma / M (m <= M), and max(u, s + sum b) >= max(u, s) + sum max(0, b - theta),
// theta = max(0, u - s) (runExcess). So each pays, per tile, max(u, s) at its kind's region, and
// the run starts' excess at one theta for all, less what the steps of the kinds with a larger
// theta lose (kindsExcess). Without stores it is tiles u + E(u). For u >= store[0] (the largest)
// it is convex in u when `convex` leaves out the first step's joint excess.
std::array<std::pair<LD, LD>, 4> JointCfg::kinds() const {
  const LD R = static_cast<LD>(nth), C = static_cast<LD>(ntw);
  return {{{(R - 1) * (C - 1), store[0]}, {R - 1, store[1]}, {C - 1, store[2]}, {1, store[3]}}};
}

LD JointCfg::perKind(LD u) const {
  LD sum = 0;
  for (auto [count, sigma] : kinds()) sum += count * std::max(u, sigma);
  return sum;
}

LD JointCfg::stepwise(LD u, bool convex) const {
  return perKind(u) + kindsExcess([&](LD theta) { return excess(theta, !convex); }, kinds(), u);
}

void forEachJointCfg(const Problem& p, const ModelOptions& m, OpId o, std::array<bool, 2> claimed,
                     std::array<bool, 2> shared, bool stores, std::array<i64, 2> readers,
                     const std::function<void(const JointCfg&)>& visit, i64 held, bool kOnly) {
  const bool claimL = claimed[0], claimR = claimed[1];
  const Op& op = p.ops[o];
  if (op.type != OpType::MatMul || op.outputs.size() != 1) return;
  const LD B = static_cast<LD>(p.bandwidth);
  const i64 N = p.native, K = op.K, W = p.widths[op.outputs[0]], H = p.heights[op.outputs[0]];
  const LD perTile = m.matmul_compute == ModelOptions::MatmulCompute::NativeDepth
                         ? static_cast<LD>(op.base_cost) * static_cast<LD>(K) / static_cast<LD>(N)
                         : static_cast<LD>(op.base_cost);
  const LD L = claimL ? static_cast<LD>(H) * static_cast<LD>(K) : 0;
  const LD R = claimR ? static_cast<LD>(K) * static_cast<LD>(W) : 0;
  const i64 kmax = m.k_limit == ModelOptions::KLimit::Reduction ? K : std::min(N, K);
  const LD kk = static_cast<LD>(K);
  for (i64 w = 1; w <= std::min(N, W); ++w) {
    // nk > 1: compute and loads only fall as h grows, so the largest h that fits gives the point.
    if (K >= 2)
      for (i64 h = std::min(N, H); h >= 1; --h)
        if ((claimL ? h : 0) + (claimR ? w : 0) + held * h * w <= p.capacity) {
          const i64 ntw = (W + w - 1) / w, nth = (H + h - 1) / h;
          JointCfg c;
          c.tiles = ntw * nth;
          c.perTile = perTile;
          c.compute = perTile * static_cast<LD>(c.tiles);
          // Band loads per side: a shared side once, or (shared-claims) its per-tile strips over
          // its readers.
          auto bands = [&](int s, i64 n) {
            if (!shared[s]) return static_cast<LD>(n);
            return readers[s] > 1 ? static_cast<LD>(n) / static_cast<LD>(readers[s]) : LD(1);
          };
          c.loads = bands(0, ntw) * L + bands(1, nth) * R;
          c.shared_loads = (shared[0] ? bands(0, ntw) * L : 0) + (shared[1] ? bands(1, nth) * R : 0);
          c.memory = c.loads / B;
          c.steps = std::max(c.compute, c.memory);
          visit(c);
          break;
        }
    if (K > kmax || kOnly) continue;
    for (i64 h = 1; h <= std::min(N, H); ++h) {
      const i64 one = (claimL ? h * K : 0) + (claimR ? K * w : 0);  // the claimed bands
      if (one + h * w > p.capacity) break;                          // nor any larger h
      const i64 ntw = (W + w - 1) / w, nth = (H + h - 1) / h;
      const i64 rowLast = H - (nth - 1) * h, colLast = W - (ntw - 1) * w;
      JointCfg c;
      c.one = true;
      c.tiles = ntw * nth;
      c.nth = nth;
      c.ntw = ntw;
      c.perTile = perTile;
      c.together = one > 0 ? std::max<i64>(1, p.capacity / one) : p.capacity;
      c.tile = h * w;
      c.ws = one + h * w;
      c.compute = perTile * static_cast<LD>(c.tiles);
      c.loads = L + R +
                (claimL && claimR ? bandReloads(kk * static_cast<LD>(h), kk * static_cast<LD>(rowLast),
                                                kk * static_cast<LD>(w), kk * static_cast<LD>(colLast), nth, ntw)
                                  : 0);
      c.bands = {claimL ? kk * static_cast<LD>(h) / B : 0, claimL ? kk * static_cast<LD>(rowLast) / B : 0,
                 claimR ? kk * static_cast<LD>(w) / B : 0, claimR ? kk * static_cast<LD>(colLast) / B : 0};
      // With forced stores S writes the whole output (W x H, the grid's shape) once for all the
      // ops of the frontier it holds, and each step its tile's region (JointCfg::stepwise).
      const LD BM = B * static_cast<LD>(c.together);
      LD storeTotal = 0;
      if (stores) {
        auto region = [&](i64 rows, i64 cols) { return static_cast<LD>(rows) * static_cast<LD>(cols) / BM; };
        c.store = {region(h, w), region(h, colLast), region(rowLast, w), region(rowLast, colLast)};
        storeTotal = static_cast<LD>(W) * static_cast<LD>(H) / BM;
      }
      c.memory = c.loads / B + storeTotal;
      c.steps = std::max(c.compute, c.memory);  // and stepwise(perTile): stepFloor()
      visit(c);
    }
  }
}

JointFrontier jointFrontier(const Problem& p, const ModelOptions& m, OpId o, std::array<bool, 2> claimed,
                            std::array<bool, 2> shared, bool stores, std::array<i64, 2> readers,
                            JointEpilogue epilogue) {
  JointFrontier res;
  res.claimed = claimed;
  res.shared = shared;
  res.readers = readers;
  res.stores = stores;
  const bool spread = (shared[0] && readers[0] > 1) || (shared[1] && readers[1] > 1);
  {  // the shared sides, counted once at nk > 1 (forEachJointCfg); spread over readers: the least
     // over the points (below)
    const Op& op = p.ops[o];
    const LD K = static_cast<LD>(op.K), W = static_cast<LD>(p.widths[op.outputs[0]]),
             H = static_cast<LD>(p.heights[op.outputs[0]]);
    res.any_loads = (claimed[0] && shared[0] ? H * K : 0) + (claimed[1] && shared[1] ? K * W : 0);
    if (spread) res.any_loads = std::numeric_limits<LD>::infinity();
  }
  // Per tile count: the least loads (at nk = 1; nk > 1; epilogue-tiles: nk > 1 with o's output
  // written, one tile held: the plain points, and ephemeral, `tiles` held).
  std::map<i64, LD> least, leastOne, leastK, written, ephemeral;
  auto keepLeast = [](std::map<i64, LD>& mp, i64 tiles, LD loads) {
    auto [it, fresh] = mp.emplace(tiles, loads);
    if (!fresh) it->second = std::min(it->second, loads);
  };
  LD perTile = 0;
  forEachJointCfg(p, m, o, claimed, shared, stores, readers, [&](const JointCfg& c) {
    if (spread && !c.one) res.any_loads = std::min(res.any_loads, c.shared_loads);
    keepLeast(least, c.tiles, c.loads);
    if (c.one) keepLeast(leastOne, c.tiles, c.loads);
    else keepLeast(leastK, c.tiles, c.loads - c.shared_loads);
    if (epilogue.on && !c.one) keepLeast(written, c.tiles, c.loads);
    perTile = c.perTile;
    if (c.steps < res.step_floor) res.step_floor = std::min(res.step_floor, c.stepFloor());
  });
  if (!(res.any_loads < std::numeric_limits<LD>::infinity())) res.any_loads = 0;  // no nk > 1 point
  // With nk >= 2 k-steps of k <= kmax, |k_last| <= min(k, K - k) <= K / 2, and a step holds its
  // claimed strips and the accumulator, (h + w) k + h w <= C (V11, A-12), so k <= (C - 1) / sides
  // at any tile (h, w >= 1).
  if (!leastK.empty()) {
    const i64 K = p.ops[o].K, sides = (claimed[0] ? 1 : 0) + (claimed[1] ? 1 : 0);
    const i64 kmax = m.k_limit == ModelOptions::KLimit::Reduction ? K : std::min(p.native, K);
    const i64 kFit = sides > 0 ? (p.capacity - 1) / sides : K;
    res.f_max = static_cast<LD>(std::max<i64>(1, std::min({kmax, K / 2, kFit}))) / static_cast<LD>(K);
  }
  if (epilogue.on && epilogue.tiles >= 2)
    forEachJointCfg(
        p, m, o, claimed, shared, stores, readers, [&](const JointCfg& c) { keepLeast(ephemeral, c.tiles, c.loads); },
        epilogue.tiles, true);
  // The Pareto frontiers: compute ascending, loads strictly descending.
  for (auto [from, to] :
       {std::pair{&least, &res.points}, std::pair{&leastOne, &res.points_one}, std::pair{&leastK, &res.points_k},
        std::pair{&written, &res.points_written}, std::pair{&ephemeral, &res.points_ephemeral}})
    for (const auto& [tiles, loads] : *from)
      if (to->empty() || loads < to->back().loads) to->push_back({perTile * static_cast<LD>(tiles), loads});
  return res;
}

namespace {

// The share of term `term` (0: compute, 1: memory, 2: step by step; besideStepShare) at one
// granularity for a Pointwise op computing t per tile; -inf where the term does not hold there.
// With `floorOnly`, term 2 takes JointCfg::perKind for stepwise: at most it (kindsExcess >= 0),
// and every operation after it is monotone in floating point too, so no more than the share.
LD besideTermShare(const BesideStepRow& row, LD y, int term, LD t, bool floorOnly = false) {
  const JointCfg& c = row.c;
  const LD none = -std::numeric_limits<LD>::infinity(), tiles = static_cast<LD>(c.tiles), nn = row.nn, F = row.F;
  if (term == 0) return c.compute >= y ? tiles * t + (c.compute - y) / nn : none;
  if (term == 1) return c.memory >= y ? (c.memory - y) / nn : none;
  const LD M = static_cast<LD>(c.together), u = c.perTile + t / M;
  return M * (std::max(c.memory, floorOnly ? c.perKind(u) : c.stepwise(u, true)) - F) + (F - y) / nn;
}

}  // namespace

// The share of a Pointwise op x beside a class of joint MatMuls in step mode (share_modes.cpp):
// every one of them takes y = their step floor, the least over granularities g of their
// JointCfg::stepFloor. A subgraph S at g with m of them and a set X of Pointwise ops (each computes
// its base cost c_x once per tile, the last k-step: A-4) pays, with n >= |X| the Pointwise ops that
// may meet the class (fewer where no tile slice fits beside the class: Crowd, besideStep), at
// least each of these terms, and each lets the ops of X take a share:
// - m compute + tiles sum c_x, when compute >= y: tiles c_x + (compute - y) / n each;
// - m memory (JointCfg::memory: loads / B, and the forced stores, the whole output once for all
//   m <= M, so at least m / M of it), when memory >= y: (memory - y) / n each;
// - with nk = 1, step by step: m F(c + c_X / m) (F = max(memory, JointCfg::stepwise), c the
//   class's compute per tile; the Pointwise ops add to each step's compute only). Where c is at
//   least the largest store per tile stepwise, hence F, is convex from c on, so
//   m (F(c + c_X / m) - F(c)) is convex in c_X, 0 at 0,
//   and falls as m grows (the slope of a convex function): at m <= M (the ops whose claimed bands
//   fit side by side) it is at least the sum over X of G(c_x), G(t) = M (F(c + t / M) - F(c))
//   (convex, 0 at 0: superadditive); when F(c) >= y, x takes G(c_x) + (F(c) - y) / n.
// Every op of X must take its share from the same term at g (shares from different terms need not
// add up under either), so the term is chosen at g by the share it gives a reference compute cref
// (one per class); x takes the least over g of that term's share, 0 where none holds (S still
// pays m y there: y is at most g's step floor). Only the g where x fits count: at nk = 1 S holds
// the class's claimed bands and an output tile (JointCfg::ws) and, beside them, the tile slices
// it needs to make x's inputs with at most M of the class's ops (Beside::slices; the first tile's,
// h x w). (At nk > 1 only the largest h that fits is visited, so there every g counts.)
// (The granularities and the term each chooses depend on the class only, so besideStepRows lists
// them once per class and besideStepShare reads them per Pointwise op: the same arithmetic, in the
// same order, as when each op enumerated them.)
BesideStepRows besideStepRows(const Problem& p, const ModelOptions& m, OpId o, const JointFrontier& f, LD cref, i64 n,
                              const Crowd& crowd) {
  BesideStepRows res;
  res.y = f.step_floor;
  const LD y = res.y, none = -std::numeric_limits<LD>::infinity();
  forEachJointCfg(p, m, o, f.claimed, f.shared, f.stores, f.readers, [&](const JointCfg& c) {
    BesideStepRow row;
    row.c = c;
    i64 count = n;  // s tile slices fit: those that need none and s perSlot more (besideStep)
    if (c.one && c.ws <= p.capacity) count = std::min(count, crowd.bound(c.together, (p.capacity - c.ws) / c.tile));
    if (!c.one) count -= crowd.nkOne;  // those never beside the class at nk > 1
    row.nn = static_cast<LD>(std::max<i64>(1, count));
    const bool convex = c.one && c.perTile >= c.store[0];  // stepwise is convex from perTile on
    row.F = convex ? std::max(c.memory, c.stepwise(c.perTile, true)) : 0;
    LD top = none;
    for (int t = 0; t < 3; ++t) {
      if (t == 2 && (!convex || row.F < y)) continue;
      if (const LD v = besideTermShare(row, y, t, cref); v > top) top = v, row.term = t;
    }
    res.rows.push_back(row);
  });
  return res;
}

LD besideStepShare(const Problem& p, const BesideStepRows& rows, const Beside& x) {
  LD least = std::numeric_limits<LD>::infinity();
  // The step-by-step rows (term 2) last, each priced only where a floor of its share (perKind for
  // stepwise) is below the least so far: the same least, with fewer stepwise.
  std::vector<std::pair<LD, const BesideStepRow*>> later;
  for (const BesideStepRow& row : rows.rows) {
    const JointCfg& c = row.c;
    if (c.one) {  // x in S at g needs its forced slices beside the class's working set
      if (c.ws + x.slicesAt(c.together) * c.tile > p.capacity) continue;
    } else if (x.nkOne) {
      continue;  // never at nk > 1 beside the class
    }
    if (row.term == 2) {
      later.emplace_back(std::max<LD>(0, besideTermShare(row, rows.y, 2, x.cx, true)), &row);
      continue;
    }
    least = std::min(least, row.term < 0 ? LD(0) : std::max<LD>(0, besideTermShare(row, rows.y, row.term, x.cx)));
    if (least <= 0) return 0;  // no share falls below 0
  }
  // The row of the least floor first (it often holds the least), then the others.
  const auto first =
      std::min_element(later.begin(), later.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (first != later.end()) std::iter_swap(later.begin(), first);
  for (const auto& [floor, row] : later) {
    if (floor >= least) continue;
    least = std::min(least, std::max<LD>(0, besideTermShare(*row, rows.y, 2, x.cx)));
    if (least <= 0) return 0;
  }
  return least < std::numeric_limits<LD>::infinity() ? std::max<LD>(0, least) : 0;
}

}  // namespace mlsys::bound_detail
