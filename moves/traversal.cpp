#include <algorithm>

#include "moves/moves.h"

namespace mlsys {

// Switch among raster / row-snake / column-snake; on small grids, also swap two adjacent
// tiles of an explicit order, or mirror the order (start from another corner: the clipped edge
// tiles first) or run it backwards (explicit orders are priced by the step walk).
bool TraversalMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  const int s = static_cast<int>(randBelow(rng, static_cast<uint64_t>(n)));
  SubgraphSched S = ev.schedule().subgraphs[s];
  auto [ntw, nth] = subgraphGrid(ev.problem(), S);
  const i64 T = ntw * nth;
  if (T < 2) return false;
  // Explicit orders are priced by the step walk, which the search allows up to
  // kMaxSearchWalkSteps steps (tiles x k-steps).
  i64 nk = 1;
  for (OpId o : S.ops)
    if (ev.problem().ops[o].type == OpType::MatMul && S.gran.k > 0)
      nk = std::max(nk, (ev.problem().ops[o].K + S.gran.k - 1) / S.gran.k);
  const bool walkable = T <= kMaxSearchWalkSteps / nk;
  if (walkable && T <= 64 && randBelow(rng, 4) == 0) {
    std::vector<int32_t> order = traversalOrder(S.trav, ntw, nth);
    size_t i = randBelow(rng, order.size() - 1);
    std::swap(order[i], order[i + 1]);
    S.trav = {TraversalKind::Custom, std::move(order)};
  } else if (walkable && T <= 256 && randBelow(rng, 3) == 0) {
    const uint64_t how = randBelow(rng, 3);
    S.trav = {TraversalKind::Custom,
              mirroredOrder(traversalOrder(S.trav, ntw, nth), ntw, nth, how == 0, how == 1, how == 2)};
  } else {
    TraversalKind kinds[] = {TraversalKind::Raster, TraversalKind::RowSnake, TraversalKind::ColSnake};
    TraversalKind k = kinds[randBelow(rng, 3)];
    if (k == S.trav.kind) return false;
    S.trav = {k, {}};
  }
  out.first = s;
  out.count = 1;
  out.repl = {std::move(S)};
  return true;
}

}  // namespace mlsys
