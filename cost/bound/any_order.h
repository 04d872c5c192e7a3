// The price of one subgraph at one granularity over EVERY tile order, at least (V10 allows any
// permutation of the tiles; the search and the exact solver price only raster, snakes and their
// mirrored starts). Used by the exact solver's full space (engine/exact/exact.h) to prove that
// no order it did not try is cheaper.
//
// THE ARGUMENT (spec L1-L5, W1-W3, E2). Fix the subgraph, w, h, k and the retained sets.
//  1. Only the first k-step of a tile depends on the order: the later k-steps of tile t follow
//     t's own previous k-step (E2: k-steps run back to back), so their price is fixed. The
//     first k-step's loads depend only on the slices of the step before it (L3: residency is
//     "the identical slice, or the full tensor, in the immediately previous step"), i.e. on
//     the predecessor tile's last k-step, or on nothing for the first tile. Working sets do
//     not depend on the order at all (W1-W2): if any step of any tile exceeds the capacity,
//     no order is valid.
//  2. So an order costs sum over tiles t of c(t | pred(t)), pred(f) = none for the first tile f.
//     Group the predecessors of t by relation: same row (R), same column (C), neither (X),
//     none (N). c_R(t), c_C(t), c_X(t) are the least c(t | p) over p in that relation
//     (computed over every p when the plan's templates may coincide by value, else on one
//     representative: with one template per tensor a slice of t is identical to p's only if
//     they share the row (row-indexed), the column (column-indexed) or neither matters
//     (tile-independent), so every p of one relation gives the same price).
//  3. In any order, within row r the tile visited first has its predecessor outside the row:
//     at most ntw - 1 tiles of a row are R, and at most nth - 1 tiles of a column are C.
//  4. Hence order price >= c_N(f) + min { sum_{t != f} c_{x_t}(t) : x_t in {R, C, X}, the caps
//     of 3 } for the first tile f. That minimum is sum c_X - the most savings (c_X - c_{x_t})
//     under the caps: a transportation problem (tiles to rows and columns with capacities),
//     solved exactly as a min-cost flow (Boost.Graph), so its optimum is integral. The floor
//     is the least over f.
//  5. With one template per tensor the tile costs depend only on whether the tile is on the
//     last row / column, so the flow runs over those four classes of tiles with the row
//     capacities summed over the rows before the last (and the last row), likewise columns:
//     rows before the last are interchangeable, so a symmetric optimum exists and the summed
//     capacities give the same minimum (with the first tile taken out of its class, a
//     relaxation: still a lower bound). Its size does not depend on the number of tiles.
//  6. In an order every tile is the predecessor of at most one tile. The arcs whose predecessor
//     lies in a row before the last (R arcs of tiles there; C and X arcs of last-row tiles,
//     whose predecessors lie in another row) are at most (R - 1) C; with R = 2 the arcs whose
//     predecessor lies in the last row (R arcs there; C and X arcs of first-row tiles) at most
//     C; columns alike. The savings problem of 4 ignores this: on two tile rows it lets every
//     second-row tile follow the tile above it while every first-row tile follows its left
//     neighbour, which no order does. With these constraints the choice of relations is a linear
//     programme over the four classes of 5 (a relaxation of the orders, so its least is a floor),
//     solved by CLP, its floating-point value taken 1e-9 lower; the floor is the larger of the two.
//  Raster and snake orders meet this floor on uniform grids (a row snake: R everywhere but the
//  first tile of each row, which is C), so it is tight where they are optimal.
#pragma once
#include "cost/pricing/subgraph.h"

namespace mlsys {

struct AnyOrderFloor {
  enum class Kind : uint8_t {
    Floor,    // num/den: every valid order costs at least this
    Invalid,  // a step exceeds the capacity (V11): no order is valid at this granularity
    Unknown,  // not computed (templates that may coincide by value, on a large grid)
  };
  Kind kind = Kind::Unknown;
  i128 num = 0;  // over the plan's denominator D * B, like SubgraphCost
};

// Plans whose templates may coincide by value (fast_ok false) need every predecessor of every
// tile: computed only up to `max_pairs_tiles` tiles (else Unknown).
// With `slots` (the lower bound's part floors; the exact solver leaves it off, for speed), a grid
// of two tile rows or two tile columns with one template per tensor also counts that each tile
// is the predecessor of at most one tile (6 below), a linear programme (COIN-OR CLP).
AnyOrderFloor anyOrderFloor(const Problem& p, const SubgraphPlan& pl, i64 max_pairs_tiles = 64, bool slots = false);

}  // namespace mlsys
