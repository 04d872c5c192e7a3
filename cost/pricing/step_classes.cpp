// Step classes: the walk's sum without walking. Within a tile, the k-steps after the first
// repeat (middle, last); across tiles, a first k-step differs only by whether the row and the
// column changed since the previous tile and whether the tile is on the last row / column (edge
// tiles are clipped). For raster and snake orders the class sizes have closed forms; for a custom
// order they are counted from the order. One step per class is priced by the StepPricer and
// multiplied by the class size; exact when the plan's slice templates never coincide by value
// (SubgraphPlan::fast_ok).
#include <array>

#include "cost/pricing/step.h"

namespace mlsys::step {
namespace {

// Tile transitions grouped by (row is last, col is last, row changed, col changed, first tile).
struct TileClasses {
  std::array<i64, 32> n{};
  void add(bool rl, bool cl, bool dr, bool dc, bool first, i64 cnt) {
    if (cnt > 0) n[(rl ? 1 : 0) | (cl ? 2 : 0) | (dr ? 4 : 0) | (dc ? 8 : 0) | (first ? 16 : 0)] += cnt;
  }
};

// Row-major raster over an R x C grid.
void rasterClasses(i64 R, i64 C, TileClasses& tc) {
  tc.add(R == 1, C == 1, false, false, true, 1);
  if (C >= 2) {
    tc.add(false, false, false, true, false, (R - 1) * (C - 2));
    tc.add(false, true, false, true, false, R - 1);
    tc.add(true, false, false, true, false, C - 2);
    tc.add(true, true, false, true, false, 1);
  }
  if (R >= 2) {
    tc.add(false, C == 1, true, C > 1, false, R - 2);
    tc.add(true, C == 1, true, C > 1, false, 1);
  }
}

// Rows in order, columns alternating direction; `add` takes (rl, cl, dr, dc, first, n).
template <class Add>
void snakeClasses(i64 R, i64 C, Add add) {
  add(R == 1, C == 1, false, false, true, 1);
  if (C >= 2) {
    i64 evenNonLast = R / 2, oddNonLast = (R - 1) / 2;  // rows 0..R-2
    add(false, false, false, true, false, evenNonLast * (C - 2) + oddNonLast * (C - 1));
    add(false, true, false, true, false, evenNonLast);
    if ((R - 1) % 2 == 0) {
      add(true, false, false, true, false, C - 2);
      add(true, true, false, true, false, 1);
    } else {
      add(true, false, false, true, false, C - 1);
    }
  }
  if (R >= 2) {
    // Entering row r (1..R-2) keeps the column: C-1 after an even row, 0 after an odd one.
    i64 oddR = (R - 1) / 2, evenR = (R - 2) / 2;  // counts of odd / even r in [1, R-2]
    add(false, true, true, false, false, oddR);
    add(false, C == 1, true, false, false, evenR);
    add(true, (R - 2) % 2 == 0 ? true : C == 1, true, false, false, 1);
  }
}

// Any explicit order: classify each transition by which of row/column changed.
void orderClasses(const std::vector<int32_t>& order, i64 R, i64 C, TileClasses& tc) {
  i64 pr = -1, pc = -1;
  for (size_t i = 0; i < order.size(); ++i) {
    i64 r = order[i] / C, c = order[i] % C;
    tc.add(r == R - 1, c == C - 1, i > 0 && r != pr, i > 0 && c != pc, i == 0, 1);
    pr = r;
    pc = c;
  }
}

}  // namespace

SubgraphCost classSteps(const Problem& p, const SubgraphPlan& pl, const Traversal& trav) {
  TileClasses tc;
  const i64 R = pl.nth, C = pl.ntw;
  const TraversalKind kind = trav.kind;
  if (kind == TraversalKind::Custom) orderClasses(trav.order, R, C, tc);
  else if (kind == TraversalKind::Raster) rasterClasses(R, C, tc);
  else if (kind == TraversalKind::RowSnake)
    snakeClasses(R, C, [&](bool rl, bool cl, bool dr, bool dc, bool f, i64 n) { tc.add(rl, cl, dr, dc, f, n); });
  else snakeClasses(C, R, [&](bool cl, bool rl, bool dc, bool dr, bool f, i64 n) { tc.add(rl, cl, dr, dc, f, n); });
  SubgraphCost sc;
  StepPricer pr(p, pl);
  LatencySum sum(static_cast<i128>(pl.D) * p.bandwidth);
  std::vector<Slice> prevSl, curSl;
  auto account = [&](const StepIdx& cur, const StepIdx* prev, i64 cnt) {
    if (cnt <= 0) return;
    if (prev) pr.slicesAt(*prev, prevSl);
    else prevSl.clear();
    pr.slicesAt(cur, curSl);
    auto res = pr.price(cur, curSl, prevSl);
    sum.add(res.num, cnt);
    sc.peak_ws = std::max(sc.peak_ws, res.ws);
    (res.compute_bound ? sc.compute_bound_steps : sc.memory_bound_steps) += cnt;
  };
  std::array<i64, 4> perTile{};  // tiles by (rl, cl), for the k-steps after the first
  for (int key = 0; key < 32; ++key) {
    i64 cnt = tc.n[key];
    if (!cnt) continue;
    bool rl = key & 1, cl = key & 2, dr = key & 4, dc = key & 8, first = key & 16;
    i64 r = rl ? R - 1 : 0, c = cl ? C - 1 : 0;
    i64 pr_ = dr ? (r == 0 ? 1 : r - 1) : r, pc = dc ? (c == 0 ? 1 : c - 1) : c;
    StepIdx cur{r, c, 0}, prev{pr_, pc, pl.nk - 1};
    account(cur, first ? nullptr : &prev, cnt);
    perTile[(rl ? 1 : 0) | (cl ? 2 : 0)] += cnt;
  }
  for (int f = 0; f < 4; ++f) {
    i64 cnt = perTile[f];
    if (!cnt || pl.nk < 2) continue;
    i64 r = (f & 1) ? R - 1 : 0, c = (f & 2) ? C - 1 : 0;
    StepIdx mid{r, c, 1}, mid0{r, c, 0};
    if (pl.nk >= 3) account(mid, &mid0, cnt * (pl.nk - 2));
    StepIdx lst{r, c, pl.nk - 1}, lst0{r, c, pl.nk - 2};
    account(lst, &lst0, cnt);
  }
  sum.finish(sc);
  sc.fast = true;
  return sc;
}

}  // namespace mlsys::step
