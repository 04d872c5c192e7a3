// The share bound of a fusion component (internal.h, shareBound): a dual argument that
// needs no enumeration of the component's parts, for components too large for the exact cover.
//
// The argument. Give every op o a share y_o >= 0 such that every valid subgraph S pays at least
// the shares of its ops: latency(S) >= sum over o in S of y_o. Every op runs in at least one
// subgraph of the component, so the component's subgraphs cost at least sum over o of y_o (the
// dual of the cover relaxation: y is feasible for every column at once). Two kinds of ops:
//
// 1. *Closed* ops: those for which every connected part containing them can be listed (at most
//    BoundOptions::share_parts). Parts that can never be valid are left out, which only works because the
//    test is upward closed (forcedInvalid, forced_shapes.cpp): if it holds for S, it holds for every S' that
//    contains S, so growing parts one adjacent op at a time from {o} reaches every valid one. For a
//    closed op, y_o = max(0, min over its listed parts S of partFloor(S) - y(S \ {o})), with the
//    other shares as they stand; processing closed ops one after another, the last of a part's
//    closed ops sees the final shares of all the others, so every part containing a closed op
//    meets its constraint.
// 2. The others (*open* ops): a subgraph S made of open ops only pays
//      latency(S) >= max(compute(S), traffic(S) / B) >= lambda compute(S) + (1 - lambda) traffic(S) / B
//    for any lambda in [0, 1]. compute(S) >= sum of the ops' compute floors (compute_floor.cpp), and
//    traffic(S) >= sum over graph inputs u read in S of u's loads (a graph input is never resident
//    at a subgraph's first step: V6 forbids retaining one, L3). Each op takes an attribution of
//    the loads of its graph inputs, such that for every u the attributions of u's readers in S
//    never exceed u's loads in S:
//    - u read by one open op of the component (its other readers are closed, so not in S, or in
//      other components): every S with that op loads u whole at least once: |u|;
//    - *pressure*: u larger than the capacity and the RHS of each open reader c, whose only
//      consumer is a MatMul d_c reading c's output as its LHS, whose LHS cannot be produced inside
//      an open S (a graph input, or made by a closed op or outside the component), the LHSs
//      distinct, and every path from c to another reader going through the edge c -> d_c. Then an
//      S holding m >= 2 readers holds every d_c, so each c is an upstream MatMul (E2), which needs
//      its LHS rows x [0, K_c) in every step (E3): with r_c rows of c's output made in a tile, the
//      working set is >= sum_c r_c K_c <= C (W1, V11). Every row of c's output is made in some tile,
//      so sum over tiles of r_c >= H_c, and the number of tiles T >= sum_c H_c K_c / C = sum_c
//      |LHS_c| / C. d_c cannot be upstream (c would need u whole: > C), so it accumulates, and c
//      makes rows x kappa_j, reading u's strip [0, K_c) x kappa_j in step j; nk = 1 would again need
//      u whole, so the strips change every step and u is loaded whole in every tile: loads >= T |u|.
//      Each reader takes |u| min(1, |LHS_c| / C): a lone reader is below the one load it always
//      pays, m >= 2 readers below T |u|; or, when the readers are alike, the larger share that
//      counts whole tile rows (gridPressure);
//    - otherwise |u| / (its open readers in the component): u is loaded at least once.
//    A *joint* open MatMul (no valid subgraph carries its output to a MatMul, so it accumulates
//    on its own grid in every one) with a side always loaded for it (claimSide: the operand, or
//    what Pointwise ops make it from, produced where no valid open S holding it can reach, and
//    too large to retain) takes, instead of its compute floor and those loads apart, the least
//    over every tile and k class of lambda x its compute + (1 - lambda) x those loads / B
//    (joint_floors.cpp): at the subgraph's own granularity both terms are its share of the sums,
//    so the least is below them. Claimed tensors are nobody else's. With upstream-joint, also a
//    MatMul that may be upstream in some S but feeds no MatMul in any S where it accumulates
//    (compute_floor.cpp, accumulationRoles; split-joint, global_floors.cpp: any MatMul with K > N under the
//    spec): in an S where it accumulates the frontier holds as
//    above; in one where it is upstream it computes on a grid of at least min_tiles_upstream
//    tiles and reads every element of its claimed operands (its whole output is made), so its
//    share is capped by that mixture (share_modes.cpp); such an op says nothing of which class
//    S is beside (SharePricing::contextClass). The caller keeps the larger of the totals with and
//    without these ops (ruler.cpp), each a bound.
//    Five refinements of these claims and contexts (share_claims.cpp, shares.h):
//    - *chain-claims*: an operand t of a joint MatMul o (K_o > N: nk > 1 in every S under the spec)
//      made by an open MatMul q (K_q >= N) is claimed with q's operand u that o's k-steps sweep (q's
//      RHS for o's LHS, its LHS for o's RHS) when u is a graph input and no other reader of t or u
//      may share a valid S with o. In S without q, t (> C, never retained) is loaded strip by strip
//      like any claimed side. With q, t is ephemeral, q is upstream (accumulating, it would be an
//      operand of o with nk > 1: E2), and makes o's strip rho x kappa_j from u's [0, K_q) x kappa_j
//      (E3): a graph input, resident from no earlier step (the strips change every step and no other
//      reader is in S), K_q >= N >= h rows against the strip's h. Either way at least o's claimed
//      strips. Not where o may be upstream (its cap counts a side once) or under k_limit=reduction.
//    - *apart-claims*: a tensor already claimed may be claimed again by an op that shares no valid
//      subgraph with any of its claimers (disjoint forced shapes); every S holds at most one of
//      them, so "nobody else's" holds in every S.
//    - *class-reach*: an op x in S with an op o of class c is joined to o by a path of fusable edges
//      (V4) whose every op is in S, so may share a valid S with o; and where no op of c may be
//      upstream, o accumulates with c's K, and a MatMul that never feeds a MatMul accumulates too,
//      so one of another K is in no such S (E2, decision 2). x meets c only if such a path reaches
//      it from one of c's ops: fewer contexts, each op's least over them can only rise.
//    - *shared-claims*: where other readers of a claimed operand t (a graph input or > C; o with
//      K_o > N, never upstream, nk > 1 under the spec) may share S with o, t's first claimer
//      counted it once and nobody else claimed it. Instead each claimer o takes its strips of t in
//      every tile over n_o, the readers of t that may share S with o (o included). In one S with m
//      readers of t, a load of a slice serves each reader's need at most once (o's strips differ
//      step by step; in two tiles they are apart in time and an identical slice would have to be
//      needed in every step between, which no tile- or strip-shaped need of another reader is; t
//      is never needed whole: > C), so the readers' needs total at most m x t's loads in S, and
//      n_o >= m. Where such a load falls is unknown: the split modes count it at the weaker weight.
//      Used where it beats the band once (ceil(W / N) > n_o for an LHS), per tensor for all its
//      claimers.
//    - *shared-reloads*: upstream-reloads (shares.h) also where other readers of o's swept operand
//      may share S with o, when none of them can hold o's strip over the steps between two of o's
//      needs of it (sharedReload states the argument).
//    An open op also takes a *forced store* (forcedStores): every valid S holding it writes one
//    of the tensors forcedOutputs lists (forced_shapes.cpp), none of which can be retained, so at
//    least the least of them; those tensors are then nobody else's.
//    *epilogue-tiles*: at a constant lambda a joint op whose output t cannot be retained takes the
//    least of its points with t written (its store, less its forced store, counted; t is then
//    nobody else's) and with t ephemeral (more tiles in the working set: joint_floors.cpp).
//    How each op mixes compute and loads (one lambda, or one per granularity, or step by step,
//    per class of joint ops that may share a subgraph) is chosen in share_modes.cpp; what
//    the other open ops take beside a class (their compute floor there, the excess of a joint op
//    they force to nk = 1) is in beside.cpp.
#include "cost/bound/shares.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "cost/model/connected_sets.h"

namespace mlsys::bound_detail {

namespace {}  // namespace

ShareBound shareBound(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                      const std::vector<std::vector<std::pair<OpId, LD>>>& adj, const std::vector<LD>& opCompute,
                      const std::vector<char>& jointEligible, const std::vector<LD>& upstreamCompute,
                      const std::vector<UpstreamReads>& upstreamReads, const std::vector<char>& feedsNoMatMul,
                      const std::function<bool()>& giveUp, int maxParts, ShareMemo& memo, const BoundArgs& args) {
  try {
    return Shares{p,
                  m,
                  ops,
                  adj,
                  opCompute,
                  jointEligible,
                  upstreamCompute,
                  upstreamReads,
                  feedsNoMatMul,
                  giveUp,
                  maxParts,
                  args,
                  memo,
                  {},
                  {},
                  {},
                  {},
                  {},
                  {},
                  {},
                  0,
                  {},
                  {},
                  {},
                  {},
                  {},
                  {},
                  {}}
        .run();
  } catch (const SharesStopped&) {
    return ShareBound{};  // stopped mid-way: no shares (0), never half-built ones
  }
}

}  // namespace mlsys::bound_detail
