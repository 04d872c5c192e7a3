// Argument "retention-prices": tying the two sides of a retained tensor (bound.h, RetentionPrices).
//
// In every schedule a tensor is retained into a subgraph at most as often as it is retained out of
// the one before (V6: one boundary), so for any prices p >= 0, sum over subgraphs of
// p x (kept in - kept out) <= 0, and a subgraph's floor plus its price term (keeping a tensor in
// costs p, keeping one out earns it) summed over the schedule stays below its latency. Part floors
// take, per retention choice, floor + price terms (part_floor.cpp, the choices). The cover then
// bounds the sum over the subgraphs that first run each op; the other subgraphs must pay >= 0 for
// it to bound the whole schedule, so a priced part floor below 0 voids the prices (a subgraph that
// keeps its output out for a later one could be run again and again, earning each time: issue 50,
// found by the brute-force sweep). Prices go only to tensors whose producer and readers lie in
// components priced by one exact cover (there every part is priced; a "floors" component could not
// answer for the price of a tensor kept out). The search for good prices (subgradient steps) is
// below; any prices it tries are sound, the best total is kept.
#include "cost/bound/ruler.h"

namespace mlsys::bound_detail {

// Retention in (+1) and out (-1) per tensor over the cover parts of `components`: the
// subgradient of the bound in the prices (bound.h, RetentionPrices).
std::vector<int> keptBalance(const Problem& p, const std::vector<BoundComponent>& components) {
  std::vector<int> g(p.numTensors(), 0);
  for (const BoundComponent& c : components)
    for (const BoundGroup& grp : c.groups)
      for (const CoverPart& part : grp.cover)
        for (TensorId t : part.floor.retained)
          g[t] += std::find(part.ops.begin(), part.ops.end(), p.producer[t]) == part.ops.end() ? 1 : -1;
  return g;
}

// Step 6: tie the two sides of retention (bound.h, RetentionPrices). For any prices >= 0 the
// bound stays a lower bound; this looks for good ones by subgradient steps from 0: a tensor the
// covers keep in more often than out gets dearer, one kept out more often cheaper (a first move
// of |t| / B, then per tensor twice its last while the subgradient keeps its sign and half of it
// when it turns: keeping a tensor in can be worth several of its loads), for at most kTieSteps
// passes and at most half the first pass's work (or kTieParts parts), keeping the best total. Prices go only to tensors
// whose producer and consumers all lie in components priced by one exact cover: there every part's price is the minimum
// over its choices of floor + prices, so the cover is a lower bound on the subgraphs' floors plus their price terms,
// whose sum is <= 0 in every schedule. (A component priced by "floors" or an edge floor ignores the terms: right for
// the +price of a tensor kept in, which only lowers it, but it could not answer for the -price of
// one kept out.) A pass in which the time runs out (a component's method changes) is dropped.
// So is a pass in which some part's priced floor is below 0 (issue 50: the cover counts each op's
// first run only, which is below the schedule's whole sum only when every other run pays >= 0;
// a part keeping its output out for a later one earned the price on each of its runs), and the
// prices that part earns are halved.
int Ruler::tieRetention(std::vector<BoundComponent>& components, LD& total) {
  constexpr int kTieSteps = 12;
  constexpr long kTieParts = 600;  // parts the priced passes may price in any case
  if (!bo_.args.on(BoundArg::RetentionPrices)) return 0;
  std::vector<int> g = bound_detail::keptBalance(p_, components);
  std::vector<char> exact(no_, 0), touched(no_, 0);
  for (const BoundComponent& c : components)
    for (OpId o : c.ops) exact[o] = c.groups.size() == 1 && c.groups[0].method == BoundMethod::Cover;
  std::vector<TensorId> eligible;
  for (int t = 0; t < p_.numTensors(); ++t) {
    const OpId pr = p_.producer[t];
    if (pr < 0 || !retainable(p_, t) || !exact[pr]) continue;
    bool all = true;
    for (OpId c : p_.consumers[t]) all = all && exact[c];
    if (!all) continue;
    eligible.push_back(t);
    touched[pr] = 1;
    for (OpId c : p_.consumers[t]) touched[c] = 1;
  }
  if (eligible.empty()) return 0;
  const std::vector<BoundComponent> first = components;
  prices_.assign(p_.numTensors(), 0);
  // Work budget: the priced passes together price at most half as many parts as the first pass
  // did (deterministic, unlike a clock, so seeded runs stay reproducible).
  const long budget = partsPriced_ + std::max<long>(partsPriced_ / 2, kTieParts);
  long lastStep = 0;
  int passes = 0;
  std::vector<double> stride(p_.numTensors(), 0);  // per tensor: its last move (signed)
  for (int step = 0; step < kTieSteps && !(bo_.give_up && bo_.give_up()); ++step) {
    if (partsPriced_ + lastStep > budget) break;
    const long before = partsPriced_;
    bool moved = false;
    for (TensorId t : eligible) {
      if (g[t] == 0) continue;
      const double unit = static_cast<double>(p_.size(t)) / static_cast<double>(p_.bandwidth);
      // The move doubles while the subgradient keeps its sign and halves when it turns.
      const double last = stride[t], dir = g[t] > 0 ? 1.0 : -1.0;
      const double size = last == 0 ? unit : (last * dir > 0 ? 2 * std::abs(last) : std::abs(last) / 2);
      const double next = std::max(0.0, prices_[t] + dir * size * std::abs(g[t]));
      stride[t] = dir * size;
      moved = moved || next != prices_[t];
      prices_[t] = next;
    }
    if (!moved) break;  // a zero subgradient: these prices are the best
    std::vector<BoundComponent> pass;
    negativeOut_.clear();
    const LD passTotal = componentsBound(pass, &first, &touched);
    ++passes;
    lastStep = partsPriced_ - before;
    if (!negativeOut_.empty()) {  // a part below 0 (cheapestCover): not a bound; halve those prices
      for (TensorId t : negativeOut_) {
        prices_[t] /= 2;
        stride[t] = -std::abs(stride[t]) / 2;
      }
      continue;
    }
    bool sameMethods = true;
    for (size_t i = 0; sameMethods && i < pass.size(); ++i)
      sameMethods = pass[i].groups.size() == first[i].groups.size() &&
                    (pass[i].groups.size() != 1 || pass[i].groups[0].method == first[i].groups[0].method);
    if (!sameMethods) break;
    g = bound_detail::keptBalance(p_, pass);
    if (passTotal > total) {
      total = passTotal;
      components = std::move(pass);
    }
  }
  prices_.clear();
  return passes;
}

}  // namespace mlsys::bound_detail
