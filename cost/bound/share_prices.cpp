// The share bound's retention prices (internal.h; the share bound itself is argued at the
// top of shares.cpp, the prices' Lagrangian in bound.h, RetentionPrices).
//
// With prices, every valid subgraph pays its shares less price x (kept in - kept out), and in <= out
// over a schedule (a tensor is retained into a subgraph only out of the one before), so the shares
// still add up to a floor. A tensor t made by a closed op q (all of q's valid parts are listed, and
// floored with the prices), retainable, is priced |t| / B, and its load split among its open
// readers in the component: an S holding some of them and not q loads t unless t is retained into
// it, where its price covers their part; an S holding q is one of q's parts, whose share is at most
// that part's floor less the others' shares (theirs included), but never below 0, which partsPaid
// checks; an S retaining t out holds q, and that part's floor counts - price for it. Closed
// readers' part floors count t themselves (loaded, or kept in at + price).
#include <algorithm>

#include "cost/bound/internal.h"

namespace mlsys::bound_detail {

namespace {

// Per closed op's output t (one output) that `take` accepts, its open readers in the component,
// when there are some.
template <class Take, class Visit>
void madeByClosed(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& open,
                  const std::vector<char>& inComp, const Take& take, const Visit& visit) {
  for (OpId q : ops) {
    if (open[q] || p.ops[q].outputs.size() != 1) continue;
    const TensorId t = p.ops[q].outputs[0];
    if (!take(t)) continue;
    std::vector<OpId> readers;
    for (OpId r : p.consumers[t])
      if (inComp[r] && open[r] && std::find(readers.begin(), readers.end(), r) == readers.end()) readers.push_back(r);
    if (!readers.empty()) visit(t, std::move(readers));
  }
}

}  // namespace

RetentionPrices retentionPrices(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& open,
                                const std::vector<char>& inComp, std::vector<PricedTensor>& priced) {
  RetentionPrices prices;
  madeByClosed(
      p, ops, open, inComp, [&](TensorId t) { return retainable(p, t); },
      [&](TensorId t, std::vector<OpId> readers) {
        if (prices.empty()) prices.assign(p.numTensors(), 0);
        prices[t] = static_cast<double>(p.size(t)) / static_cast<double>(p.bandwidth);
        priced.push_back({t, std::move(readers)});
      });
  return prices;
}

// The same without a price for a tensor too large to retain (V6, W1: never resident at S's first
// step), so every S holding readers and not its maker loads it whole (every element of an input
// is used), once for all of them; one holding the maker is one of its parts (partsPaid). A claimed
// one (its claimer's joint floor counts its loads where the claimer is in S) goes to `beside`
// instead: its readers take it only where the claimer is not in S (closedClaimedLoads).
void closedLoads(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& open,
                 const std::vector<char>& inComp, const std::vector<char>& claimed, std::vector<PricedTensor>& priced,
                 std::vector<PricedTensor>& beside) {
  madeByClosed(
      p, ops, open, inComp, [&](TensorId t) { return !retainable(p, t); },
      [&](TensorId t, std::vector<OpId> readers) {
        (claimed[t] ? beside : priced).push_back({t, std::move(readers)});
      });
}

// The loads of closedLoads' claimed tensors, added (sign +1) or taken back (-1): each of its
// open readers that is not joint takes its share with no joint op beside it and beside every
// class but its claimer's (classes never meet, so there the claimer is not in S; a claimer no
// valid subgraph holds, in no class, is never in S).
void closedClaimedLoads(const Problem& p, const std::vector<PricedTensor>& beside,
                        const std::vector<std::vector<OpId>>& claimer, SharePricing& sp, int sign) {
  for (const PricedTensor& x : beside) {
    const LD share = static_cast<LD>(sign) * static_cast<LD>(p.size(x.t)) / static_cast<LD>(x.readers.size());
    if (claimer[x.t].size() != 1) continue;  // claimed twice: its readers take none of it
    const int away = sp.joint_class[claimer[x.t][0]];
    if (sp.upstreamCapable(claimer[x.t][0])) continue;  // it may be in S beside any class, counting x.t
    for (OpId r : x.readers) {
      if (sp.joint[r]) continue;
      sp.free_loads[r] += share;
      for (size_t i = 0; i < sp.meets[r].size(); ++i)
        if (sp.meets[r][i] != away || away < 0) sp.meets_loads[r][i] += share;
    }
  }
}

void attributePrices(const Problem& p, const std::vector<PricedTensor>& priced, std::vector<LD>& traffic, int sign) {
  for (const PricedTensor& x : priced)
    for (OpId r : x.readers)
      traffic[r] += static_cast<LD>(sign) * static_cast<LD>(p.size(x.t)) / static_cast<LD>(x.readers.size());
}

bool partsPaid(const Problem& p, const std::vector<OpId>& ops, const std::vector<std::vector<std::vector<OpId>>>& parts,
               const std::vector<LD>& shares, const std::map<std::vector<OpId>, LD>& floorOf) {
  std::vector<LD> y(p.numOps(), 0);
  for (size_t i = 0; i < ops.size(); ++i) y[ops[i]] = shares[i];
  for (OpId o : ops)
    for (const std::vector<OpId>& S : parts[o]) {
      LD sum = 0;
      for (OpId v : S) sum += y[v];
      if (sum > floorOf.at(S) * (1 + 1e-12L) + 1e-9L) return false;
    }
  return true;
}

}  // namespace mlsys::bound_detail
