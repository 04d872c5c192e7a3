// The any-order floor of one subgraph at one granularity (the argument is in any_order.h).
#include "cost/bound/any_order.h"

#include <algorithm>
#include <optional>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/successive_shortest_path_nonnegative_weights.hpp>
// (after the algorithm: it relies on the named-parameter headers that one includes)
#include <cmath>

#include <boost/graph/find_flow_cost.hpp>
#include <coin/ClpSimplex.hpp>
#include <coin/CoinPackedMatrix.hpp>

#include "cost/pricing/step.h"

namespace mlsys {
namespace {

using step::Slice;
using step::StepIdx;
constexpr i128 kNo = -1;  // the relation is impossible on this grid

// c_N, c_R, c_C, c_X of one tile: its first k-step after no / a same-row / a same-column /
// another tile, plus its later k-steps.
struct TileCosts {
  i128 n = kNo, r = kNo, c = kNo, x = kNo;
};

class FloorOf {
 public:
  FloorOf(const Problem& p, const SubgraphPlan& pl) : p_(p), pl_(pl), pr_(p, pl) {}
  bool invalid = false;  // a step's working set exceeds the capacity

  // The price of step `cur` after step `prev` (nullptr: the subgraph's first step); marks a
  // working set over the capacity (W3; it does not depend on `prev`).
  i128 step(const StepIdx& cur, const StepIdx* prev) {
    if (prev) pr_.slicesAt(*prev, prevSl_);
    else prevSl_.clear();
    pr_.slicesAt(cur, curSl_);
    auto res = pr_.price(cur, curSl_, prevSl_);
    if (res.ws > p_.capacity) invalid = true;
    return res.num;
  }

  // The k-steps after the first of tile (r, c) (E2: each follows the tile's own previous one).
  i128 tail(i64 r, i64 c) {
    const i64 nk = pl_.nk;
    if (nk < 2) return 0;
    if (pl_.fast_ok) {  // the middle k-steps have identical slices and price (step_classes.cpp)
      StepIdx m0{r, c, 0}, m1{r, c, 1}, l0{r, c, nk - 2}, l1{r, c, nk - 1};
      return (nk >= 3 ? step(m1, &m0) * (nk - 2) : 0) + step(l1, &l0);
    }
    i128 s = 0;
    for (i64 j = 1; j < nk; ++j) {
      StepIdx a{r, c, j - 1}, b{r, c, j};
      s += step(b, &a);
    }
    return s;
  }

  // The first k-step of tile (r, c) after the last k-step of tile (pr, pc).
  i128 head(i64 r, i64 c, i64 pr, i64 pc) {
    StepIdx cur{r, c, 0}, prev{pr, pc, pl_.nk - 1};
    return step(cur, &prev);
  }
  i128 first(i64 r, i64 c) { return step(StepIdx{r, c, 0}, nullptr); }

 private:
  const Problem& p_;
  const SubgraphPlan& pl_;
  step::StepPricer pr_;
  std::vector<Slice> prevSl_, curSl_;
};

// One template per tensor: every tile of a (last row?, last column?) class has the same costs,
// and one representative predecessor per relation gives them (any_order.h, 2). cls[k]: the
// class with bit 0 = last row, bit 1 = last column (unset when the grid has no such tile).
void classCosts(FloorOf& fo, i64 R, i64 C, TileCosts (&cls)[4]) {
  for (int k = 0; k < 4; ++k) {
    const bool rl = k & 1, cl = k & 2;
    if ((!rl && R < 2) || (!cl && C < 2)) continue;
    const i64 r = rl ? R - 1 : 0, c = cl ? C - 1 : 0;
    const i64 r2 = r == 0 ? 1 : r - 1, c2 = c == 0 ? 1 : c - 1;  // another row / column
    const i128 t = fo.tail(r, c);
    TileCosts& x = cls[k];
    x.n = fo.first(r, c) + t;
    if (C >= 2) x.r = fo.head(r, c, r, c2) + t;
    if (R >= 2) x.c = fo.head(r, c, r2, c) + t;
    if (R >= 2 && C >= 2) x.x = fo.head(r, c, r2, c2) + t;
  }
}

// Templates that may coincide by value: the least over every predecessor of each relation.
void pairCosts(FloorOf& fo, i64 R, i64 C, std::vector<TileCosts>& tc) {
  for (i64 r = 0; r < R; ++r)
    for (i64 c = 0; c < C; ++c) {
      TileCosts& x = tc[r * C + c];
      const i128 t = fo.tail(r, c);
      x.n = fo.first(r, c) + t;
      for (i64 pr = 0; pr < R; ++pr)
        for (i64 pc = 0; pc < C; ++pc) {
          if (pr == r && pc == c) continue;
          const i128 v = fo.head(r, c, pr, pc) + t;
          i128& slot = pr == r ? x.r : pc == c ? x.c : x.x;
          if (slot == kNo || v < slot) slot = v;
        }
    }
}

// What the savings problem needs of a tile (or a class of tiles): c_X (a stand-in where no
// predecessor shares neither row nor column, any_order.h), and the savings sR = c_X - c_R,
// sC = c_X - c_C (0 where the relation is impossible: its capacity is 0 anyway).
struct Saving {
  i128 cX = 0, sR = 0, sC = 0;
};
Saving savingOf(const TileCosts& x) {
  Saving s;
  i128 v = x.x;
  // No order uses X on one row or one column, so any value keeps the relaxation valid; the
  // least possible relation's keeps it tight. A single tile is the first.
  if (v == kNo) v = x.r == kNo ? x.c : x.c == kNo ? x.r : std::min(x.r, x.c);
  if (v == kNo) v = x.n;
  s.cX = v;
  s.sR = x.r == kNo ? 0 : std::max<i128>(0, v - x.r);
  s.sC = x.c == kNo ? 0 : std::max<i128>(0, v - x.c);
  return s;
}

// The savings problem of any_order.h (4) solved exactly, as a min-cost flow (Boost.Graph's
// successive shortest paths): the source sends `units[i]` to group i (a tile, or a class of
// interchangeable tiles); group i sends to its row set row[i] at cost M - sR_i, to its column
// set col[i] at cost M - sC_i, or to "no saving" at cost M; row set j takes at most rowCap[j],
// column set j colCap[j]. Every unit routes, so the least cost is units * M - the most savings.
// It is a transportation problem, so the optimum is integral. -1 when 64-bit costs could
// overflow (the caller then bounds the savings by every unit's best saving).
struct SavingsNet {
  std::vector<i64> units, row, col;
  std::vector<Saving> sv;
  std::vector<i64> rowCap, colCap;
};
// used: per group, the units it sends to its row set and to its column set (R and C arcs).
i128 maxSavings(const SavingsNet& n, std::vector<std::pair<i64, i64>>* used = nullptr) {
  i128 M = 0, units = 0;
  for (size_t i = 0; i < n.units.size(); ++i) {
    M = std::max({M, n.sv[i].sR, n.sv[i].sC});
    units += n.units[i];
  }
  if (M > (i128{1} << 40) || units > (i128{1} << 20)) return -1;
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Graph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, long,
                      boost::property<boost::edge_residual_capacity_t, long,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor,
                                                      boost::property<boost::edge_weight_t, long>>>>>;
  // Nodes: groups, row sets, column sets, then "no saving", source, sink.
  const long G = static_cast<long>(n.units.size()), nr = static_cast<long>(n.rowCap.size());
  const long nc = static_cast<long>(n.colCap.size());
  const long none = G + nr + nc, src = none + 1, snk = none + 2;
  Graph g(static_cast<size_t>(snk + 1));
  auto cap = boost::get(boost::edge_capacity, g);
  auto rev = boost::get(boost::edge_reverse, g);
  auto wt = boost::get(boost::edge_weight, g);
  using Edge = Traits::edge_descriptor;
  std::vector<std::pair<std::optional<Edge>, std::optional<Edge>>> toSets(static_cast<size_t>(G));
  auto arc = [&](long u, long v, long c, long w) -> std::optional<Edge> {
    if (c <= 0) return std::nullopt;
    auto e = boost::add_edge(u, v, g).first, r = boost::add_edge(v, u, g).first;
    cap[e] = c;
    cap[r] = 0;
    wt[e] = w;
    wt[r] = -w;
    rev[e] = r;
    rev[r] = e;
    return e;
  };
  const long m = static_cast<long>(M), all = static_cast<long>(units);
  for (long i = 0; i < G; ++i) {
    const long u = static_cast<long>(n.units[i]);
    arc(src, i, u, 0);
    toSets[static_cast<size_t>(i)].first = arc(i, G + n.row[i], u, m - static_cast<long>(n.sv[i].sR));
    toSets[static_cast<size_t>(i)].second = arc(i, G + nr + n.col[i], u, m - static_cast<long>(n.sv[i].sC));
    arc(i, none, u, m);
  }
  for (long j = 0; j < nr; ++j) arc(G + j, snk, static_cast<long>(n.rowCap[j]), 0);
  for (long j = 0; j < nc; ++j) arc(G + nr + j, snk, static_cast<long>(n.colCap[j]), 0);
  arc(none, snk, all, 0);
  boost::successive_shortest_path_nonnegative_weights(g, src, snk);
  if (used) {
    auto res = boost::get(boost::edge_residual_capacity, g);
    auto sent = [&](const std::optional<Edge>& e) { return e ? static_cast<i64>(cap[*e] - res[*e]) : i64{0}; };
    used->clear();
    for (const auto& [toRow, toCol] : toSets) used->push_back({sent(toRow), sent(toCol)});
  }
  return units * M - boost::find_flow_cost(g);
}

// slotsFloor's predecessor slots: per row set (the rows before the last; the last row, when
// R = 2; columns alike) the arcs whose predecessor lies there, as columns 3 g + relation (R 0,
// C 1, X 2) of group g, and the set's tiles.
struct SlotRow {
  std::vector<int> arcs;
  i64 cap;
};
std::vector<SlotRow> slotRows(const SavingsNet& n, i64 R, i64 C) {
  std::vector<SlotRow> out;
  auto slots = [&](bool rows, i64 set, i64 cap) {
    SlotRow sr{{}, cap};
    for (int g = 0; g < static_cast<int>(n.units.size()); ++g) {
      const i64 mine = rows ? n.row[static_cast<size_t>(g)] : n.col[static_cast<size_t>(g)];
      if (mine == set) sr.arcs.push_back(3 * g + (rows ? 0 : 1));                    // same row (column): R (C)
      else sr.arcs.push_back(3 * g + (rows ? 1 : 0)), sr.arcs.push_back(3 * g + 2);  // the other: C/X (R/X)
    }
    out.push_back(std::move(sr));
  };
  if (R >= 2) slots(true, 0, (R - 1) * C);
  if (R == 2) slots(true, 1, C);
  if (C >= 2) slots(false, 0, (C - 1) * R);
  if (C == 2) slots(false, 1, R);
  return out;
}

// The same choice of relations with what the savings problem leaves out, as a linear programme
// (COIN-OR CLP), for the four tile classes of a grid with one template per tensor (any_order.h,
// 5): every tile is the predecessor of at most one tile (an order is a path). So the arcs whose
// predecessor lies in a row before the last (R arcs of tiles there; C and X arcs of last-row
// tiles, whose predecessors lie in another row) are at most (R - 1) C, and likewise for columns;
// with R = 2 the arcs into the last row's tiles (R arcs there; C and X arcs of the first row's)
// are at most C, and likewise with C = 2. On a grid of two tile rows the savings problem lets
// every second-row tile follow the tile above it and every first-row tile its left neighbour at
// once; no path does. The programme's least cost is a floor of every order (a relaxation of
// them); its value in floating point is taken 1e-9 lower (relative) so that the rounding of the
// solver cannot lift it above that least cost. -1 where not solved.
i128 slotsFloor(const SavingsNet& n, const std::vector<TileCosts>& tc, i64 R, i64 C) {
  const int G = static_cast<int>(n.units.size());
  // Columns: per group R, C, X arcs (3g, 3g+1, 3g+2).
  std::vector<double> obj(static_cast<size_t>(3 * G)), lo(static_cast<size_t>(3 * G), 0),
      up(static_cast<size_t>(3 * G), COIN_DBL_MAX);
  for (int g = 0; g < G; ++g) {
    const TileCosts& x = tc[static_cast<size_t>(g)];
    const Saving s = n.sv[static_cast<size_t>(g)];
    obj[3 * g] = static_cast<double>(s.cX - s.sR);
    obj[3 * g + 1] = static_cast<double>(s.cX - s.sC);
    obj[3 * g + 2] = static_cast<double>(s.cX);
    if (x.r == kNo) up[3 * g] = 0;
    if (x.c == kNo) up[3 * g + 1] = 0;
  }
  std::vector<int> rowIdx, colIdx;
  std::vector<double> el, rlo, rup;
  int r = 0;
  auto row = [&](const std::vector<std::pair<int, double>>& terms, double l, double u) {
    for (const auto& [c, v] : terms) rowIdx.push_back(r), colIdx.push_back(c), el.push_back(v);
    rlo.push_back(l), rup.push_back(u), ++r;
  };
  const double inf = COIN_DBL_MAX;
  for (int g = 0; g < G; ++g) {
    const double u = static_cast<double>(n.units[static_cast<size_t>(g)]);
    row({{3 * g, 1}, {3 * g + 1, 1}, {3 * g + 2, 1}}, u, u);
  }
  for (size_t j = 0; j < n.rowCap.size(); ++j) {
    std::vector<std::pair<int, double>> t;
    for (int g = 0; g < G; ++g)
      if (n.row[static_cast<size_t>(g)] == static_cast<i64>(j)) t.push_back({3 * g, 1});
    row(t, -inf, static_cast<double>(n.rowCap[j]));
  }
  for (size_t j = 0; j < n.colCap.size(); ++j) {
    std::vector<std::pair<int, double>> t;
    for (int g = 0; g < G; ++g)
      if (n.col[static_cast<size_t>(g)] == static_cast<i64>(j)) t.push_back({3 * g + 1, 1});
    row(t, -inf, static_cast<double>(n.colCap[j]));
  }
  for (const SlotRow& sr : slotRows(n, R, C)) {
    std::vector<std::pair<int, double>> t;
    for (int c : sr.arcs) t.push_back({c, 1});
    row(t, -inf, static_cast<double>(sr.cap));
  }
  CoinPackedMatrix m(true, rowIdx.data(), colIdx.data(), el.data(), static_cast<CoinBigIndex>(el.size()));
  ClpSimplex lp;
  lp.setLogLevel(0);
  lp.loadProblem(m, lo.data(), up.data(), obj.data(), rlo.data(), rup.data());
  lp.dual();
  if (lp.status() != 0) return -1;
  const double v = lp.objectiveValue();
  if (!(v > 0) || v > 1e30) return -1;
  return static_cast<i128>(std::floor(v * (1 - 1e-9)));
}

// Whether a choice of relations (per group its R and C arcs, the rest X) keeps slotsFloor's
// predecessor slots.
bool slotsHold(const SavingsNet& n, const std::vector<std::pair<i64, i64>>& used, i64 R, i64 C) {
  for (const SlotRow& sr : slotRows(n, R, C)) {
    i64 arcs = 0;
    for (int c : sr.arcs) {
      const auto [r, col] = used[static_cast<size_t>(c / 3)];
      arcs += c % 3 == 0 ? r : c % 3 == 1 ? col : n.units[static_cast<size_t>(c / 3)] - r - col;
    }
    if (arcs > sr.cap) return false;
  }
  return true;
}

// The floor for first tile(s) of group `f`: c_N(f) + sum of c_X over the other tiles - the most
// savings (exactly, or bounded by each unit's best saving when the flow could overflow).
// With the classes' costs (`classes`, fast_ok), also the predecessor slots' programme
// (slotsFloor), the larger of the two.
i128 floorWithFirst(SavingsNet n, size_t f, i128 cN, const std::vector<TileCosts>* classes = nullptr, i64 R = 0,
                    i64 C = 0) {
  --n.units[f];
  i128 sumX = 0, loose = 0;
  for (size_t i = 0; i < n.units.size(); ++i) {
    sumX += n.sv[i].cX * n.units[i];
    loose += std::max(n.sv[i].sR, n.sv[i].sC) * n.units[i];
  }
  std::vector<std::pair<i64, i64>> used;
  i128 u = maxSavings(n, &used);
  const bool exact = u >= 0;
  if (u < 0) u = loose;
  i128 floor = cN + sumX - u;
  // The programme only where the savings problem's choice takes some predecessor twice (else
  // that choice is also the programme's optimum).
  if (classes && (R == 2 || C == 2) && (!exact || !slotsHold(n, used, R, C)))
    floor = std::max(floor, cN + slotsFloor(n, *classes, R, C));
  return floor;
}

}  // namespace

AnyOrderFloor anyOrderFloor(const Problem& p, const SubgraphPlan& pl, i64 max_pairs_tiles, bool slots) {
  AnyOrderFloor out;
  if (!pl.valid) {
    out.kind = AnyOrderFloor::Kind::Invalid;
    return out;
  }
  const i64 R = pl.nth, C = pl.ntw, T = pl.tiles();
  if (!pl.fast_ok && T > max_pairs_tiles) return out;
  FloorOf fo(p, pl);
  SavingsNet net;
  std::vector<i128> firstCost;        // c_N per group
  std::vector<TileCosts> groupCosts;  // per group, with one template per tensor
  if (pl.fast_ok) {
    // Groups: the four tile classes; row sets: the rows before the last (capacity (R-1)(C-1))
    // and the last row (C-1); column sets likewise. Rows of one set are interchangeable, so the
    // per-row capacities summed over a set give the same optimum (a symmetric optimal solution
    // exists; with the first tile taken out the sums are a relaxation: still a lower bound).
    TileCosts cls[4];
    classCosts(fo, R, C, cls);
    groupCosts.clear();
    net.rowCap = {(R - 1) * (C - 1), C - 1};
    net.colCap = {(C - 1) * (R - 1), R - 1};
    for (int k = 0; k < 4; ++k) {
      const bool rl = k & 1, cl = k & 2;
      if ((!rl && R < 2) || (!cl && C < 2)) continue;
      net.units.push_back((rl ? 1 : R - 1) * (cl ? 1 : C - 1));
      net.row.push_back(rl ? 1 : 0);
      net.col.push_back(cl ? 1 : 0);
      net.sv.push_back(savingOf(cls[k]));
      firstCost.push_back(cls[k].n);
      groupCosts.push_back(cls[k]);
    }
  } else {
    std::vector<TileCosts> tc(static_cast<size_t>(T));
    pairCosts(fo, R, C, tc);
    net.rowCap.assign(static_cast<size_t>(R), C - 1);
    net.colCap.assign(static_cast<size_t>(C), R - 1);
    for (i64 t = 0; t < T; ++t) {
      net.units.push_back(1);
      net.row.push_back(t / C);
      net.col.push_back(t % C);
      net.sv.push_back(savingOf(tc[t]));
      firstCost.push_back(tc[t].n);
    }
  }
  if (fo.invalid) {
    out.kind = AnyOrderFloor::Kind::Invalid;
    return out;
  }
  bool any = false;
  for (size_t f = 0; f < net.units.size(); ++f) {
    const i128 lb = floorWithFirst(net, f, firstCost[f], slots && pl.fast_ok ? &groupCosts : nullptr, R, C);
    if (!any || lb < out.num) out.num = lb;
    any = true;
  }
  out.num = std::max<i128>(out.num, 0);
  out.kind = AnyOrderFloor::Kind::Floor;
  return out;
}

}  // namespace mlsys
