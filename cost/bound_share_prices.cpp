// The share bound's retention prices (bound_internal.h; the share bound itself is argued at the
// top of bound_shares.cpp, the prices' Lagrangian in bound.h, RetentionPrices).
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

#include "cost/bound_internal.h"

namespace mlsys::bound_detail {

RetentionPrices retentionPrices(const Problem& p, const std::vector<OpId>& ops, const std::vector<char>& open,
                                const std::vector<char>& inComp, std::vector<PricedTensor>& priced) {
  RetentionPrices prices;
  for (OpId q : ops) {
    if (open[q] || p.ops[q].outputs.size() != 1) continue;
    const TensorId t = p.ops[q].outputs[0];
    if (!retainable(p, t)) continue;
    std::vector<OpId> readers;
    for (OpId r : p.consumers[t])
      if (inComp[r] && open[r] && std::find(readers.begin(), readers.end(), r) == readers.end()) readers.push_back(r);
    if (readers.empty()) continue;
    if (prices.empty()) prices.assign(p.numTensors(), 0);
    prices[t] = static_cast<double>(p.size(t)) / static_cast<double>(p.bandwidth);
    priced.push_back({t, std::move(readers)});
  }
  return prices;
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
