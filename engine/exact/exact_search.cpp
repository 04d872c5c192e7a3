// The exact solver's A* search over (covered, written, retained) states (see exact.h, ALGORITHM,
// and exact_internal.h): expand a state by every subgraph that can follow it and every set it
// may retain, each transition priced by the granularity search (exact_gran.cpp).
#include <algorithm>
#include <vector>

#include "engine/exact/exact_internal.h"

namespace mlsys::exact_detail {

// A* from the empty state until the open list is empty, its least f reaches the incumbent, or
// `stop` fires.
Solver::SearchEnd Solver::search() {
  ExactStats& st = res_.stats;
  StateKey start{0, 0, 0};
  Cost h0 = hOf(0, 0);
  nodes_.push_back({start, 0, 0, h0, -1, {-1, 0, 0}, false});
  index_[start] = 0;
  ++st.states_generated;
  pq_.push({h0, 0, 0});
  SearchEnd end;
  while (true) {
    if (pq_.empty()) {
      end.proven = true;
      break;
    }
    if (stop_()) {
      end.stopped = true;
      break;
    }
    QItem top = pq_.top();
    if (top.f >= ub_) {
      end.proven = true;
      break;
    }
    pq_.pop();
    Node& cur = nodes_[top.id];
    if (cur.closed || top.d != cur.d) continue;
    if (goal(cur.key)) {
      // Only in the full space (elsewhere a goal's distance is its price, the incumbent's at
      // most): no path of floors is shorter, so no schedule costs less than this distance.
      end.bounded = true;
      end.relaxed = top.d;
      break;
    }
    cur.closed = true;
    ++st.states_expanded;
    try {
      expand(top.id);
    } catch (const Stopped&) {
      end.stopped = true;
      end.frontierLb = std::min(end.frontierLb, top.f);
      break;
    }
  }
  return end;
}

// Every subgraph whose boundary inputs the state has (V5) and whose bound, before choosing
// what it retains, can still beat the incumbent.
void Solver::expand(int curId) {
  const StateKey k = nodes_[curId].key;
  const Cost d = nodes_[curId].d;
  const u64 avail = k.wr | k.ret;
  i128 retSize = 0;
  for (u64 b = k.ret; b; b &= b - 1) retSize += bitSize_[__builtin_ctzll(b)];
  for (size_t si = 0; si < subs_.size(); ++si) {
    const SubInfo& S = subs_[si];
    if (S.need & ~avail) continue;  // V5
    const u64 cov2 = k.cov | S.ops;
    const Cost h2 = hOf(cov2, k.wr | S.go);
    i128 loadEl = S.giElems;
    for (u64 b = S.need & ~k.ret; b; b &= b - 1) loadEl += bitSize_[__builtin_ctzll(b)];
    const Cost lbS = std::max(S.computeLb, traffic(loadEl + S.goElems));
    if (!o_.verify && addCost(addCost(d, lbS), h2) >= ub_) continue;
    appendSubgraph(Step{curId, k, d, static_cast<int>(si), retSize, loadEl, lbS, cov2, h2});
  }
}

// Every retained-out subset (V6, V7), within the capacity as full tensors (W1), of one subgraph
// appended to the expanded state: the transitions whose bound can beat the incumbent, priced.
void Solver::appendSubgraph(const Step& x) {
  ExactStats& st = res_.stats;
  const bool verify = o_.verify;
  const SubInfo& S = subs_[x.si];
  // The retained-out sets to try, in increasing order of their bit masks (the order of the plain
  // submask walk, so the search visits transitions in the same order as before). Outside verify
  // mode only the sets that fit beside the retained-in ones (the capacity test below) are listed:
  // a depth-first walk over the retainable tensors that stops adding once the sizes pass the
  // capacity, since every superset of a set that does not fit does not fit either. The plain walk
  // rejected them one by one (on mlsys-2026-5, most of its 9.8e9 transitions in 120 s).
  const u64 R = S.retainable;
  subsetScratch_.clear();
  if (verify) {
    u64 r = 0;
    do subsetScratch_.push_back(r), r = (r - R) & R;
    while (r != 0);
  } else {
    std::vector<int>& bits = bitScratch_;
    bits.clear();
    for (u64 b = R; b; b &= b - 1) bits.push_back(__builtin_ctzll(b));
    const i128 room = static_cast<i128>(p_.capacity) - x.retSize;
    auto walk = [&](auto&& self, size_t i, u64 set, i128 size) -> void {
      if (i == bits.size()) {
        subsetScratch_.push_back(set);
        return;
      }
      self(self, i + 1, set, size);
      const i128 s2 = size + bitSize_[bits[i]];
      if (s2 <= room) self(self, i + 1, set | u64{1} << bits[i], s2);
    };
    if (room >= 0) walk(walk, 0, 0, 0);
    std::sort(subsetScratch_.begin(), subsetScratch_.end());
  }
  for (const u64 rout : subsetScratch_) {
    if ((++st.transitions & 255) == 0 && stop_()) throw Stopped{};
    i128 rs = x.retSize;
    i128 written = 0;
    for (u64 b = rout; b; b &= b - 1) rs += bitSize_[__builtin_ctzll(b)];
    for (u64 b = S.outputs & ~rout; b; b &= b - 1) written += bitSize_[__builtin_ctzll(b)];
    const StateKey nk{x.cov2, x.k.wr | (S.outputs & ~rout), rout};
    if ((rs <= p_.capacity || verify) && !(nk == x.k)) {
      const Cost lbT = std::max(S.computeLb, traffic(x.loadEl + written));
      if (verify || addCost(addCost(x.d, lbT), x.h2) < ub_) {
        const Edge e{x.si, x.k.ret, rout};
        const Cost cap = verify ? kInf : ub_ - x.d - x.h2;
        // The transition's floor, at least its bound lbT (full space: keeps the heuristic
        // consistent over floors; elsewhere the price is >= lbT already).
        Cost c = price(e, cap);
        if (c < kInf) c = std::max(c, lbT);
        if (verify && c < kInf) {
          // The bounds the normal mode prunes with, against the exact price: the
          // transition bound, the capacity of the retained tensors, and the heuristic's
          // consistency h(k) <= c + h(nk).
          if (c < lbT || c < x.lbS || rs > p_.capacity) ++st.lb_violations;
          if (heuristic(x.k.cov, x.k.wr) > addCost(c, heuristic(nk.cov, nk.wr))) ++st.lb_violations;
        }
        if (c < kInf) reach(x, nk, e, addCost(x.d, c), addCost(nodes_[x.from].b, entry(e).best));
      }
    }
  }
}

// State nk reached at distance nd by edge e: opened, or its distance lowered; a goal becomes the
// incumbent at once.
void Solver::reach(const Step& x, const StateKey& nk, const Edge& e, Cost nd, Cost nb) {
  if (addCost(nd, x.h2) >= ub_) return;
  ExactStats& st = res_.stats;
  auto [it, fresh] = index_.try_emplace(nk, static_cast<int>(nodes_.size()));
  if (fresh) {
    nodes_.push_back({nk, nd, nb, x.h2, x.from, e, false});
    ++st.states_generated;
    pq_.push({addCost(nd, x.h2), nd, it->second});
  } else if (!nodes_[it->second].closed && nd < nodes_[it->second].d) {
    Node& nn = nodes_[it->second];
    nn.d = nd;
    nn.b = nb;
    nn.parent = x.from;
    nn.edge = e;
    pq_.push({addCost(nd, x.h2), nd, it->second});
  }
  if (goal(nk) && nb < ub_) {
    ub_ = nb;
    incPath_ = pathTo(x.from);
    incPath_.push_back(e);
    incIsPath_ = true;
    ++st.incumbent_updates;
  }
}

}  // namespace mlsys::exact_detail
