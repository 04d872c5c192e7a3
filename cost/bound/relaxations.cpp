// The Ruler's relaxation steps: step 7, the cover's linear relaxation of each group of 21-64 ops
// (lp_relaxation.cpp states the argument), and step 9, the large-parts relaxation of each large
// component (below).
//
// The large-parts relaxation (boundedRelaxation, Ruler step 9: `large-parts`) is the same programme
// for a component of any size, with only its parts of at most K ops listed. An op is *large* when a
// connected set of K + 1 ops holding it passes the listing's upward-closed tests (lp_relaxation.cpp,
// validParts, which reaches every such set, growing them as it grows the parts). Every op x of a
// valid subgraph S of more than K ops is large: S is connected along the component's edges (V4),
// so a breadth-first search of S from x gives a connected T within S of K + 1 ops holding x, and T
// passes the tests since S does (upward closed). So with y_o <= s_o, the share bound's share
// (shares.cpp: every valid subgraph pays at least its ops' shares), for every large op o, and
// y_e = 0 for every reader element whose maker is large (a part serving (o, d) holds o), such an S
// pays what the cover argument asks of it: sum over its unforced ops of y + sum over the elements
// it serves of y <= sum over o in S of s_o <= latency(S). A listed part's right-hand side is the
// larger of partFloor(S) and sum over S of s_o (each is below latency(S)), so y = s is feasible:
// the relaxation is at least the share bound. Test: `LargeParts.*`, `BoundSoundness.*`.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "cost/bound/internal.h"
#include "cost/bound/ruler.h"

namespace mlsys::bound_detail {

// boundedRelaxation with every op large: y <= s everywhere and y = s feasible, so the shares.
LpCover sharesOnly(const std::vector<LD>& shares) {
  LpCover res;
  res.shares = shares;
  for (LD v : shares) res.value += v;
  res.large = static_cast<int>(shares.size());
  res.done = true;
  return res;
}

// boundedRelaxation's caps per column (ops, then reader elements): a large op's y is at most its
// share, an element whose maker is large has none; infinite elsewhere (none without shares).
std::vector<LD> capsOf(const std::vector<char>& large, const std::vector<LD>* shares,
                       const std::vector<int32_t>& makerOf, int elements) {
  if (!shares) return {};
  const int n = static_cast<int>(large.size());
  std::vector<LD> caps(static_cast<size_t>(n + elements), std::numeric_limits<LD>::infinity());
  for (int j = 0; j < n; ++j)
    if (large[j]) caps[j] = (*shares)[j];
  for (int e = 0; e < elements; ++e)
    if (large[makerOf[e]]) caps[n + e] = 0;
  return caps;
}

bool Ruler::lpRaise(const BoundGroup& g, std::optional<BoundGroup>& up) {
  up.reset();
  const bound_detail::LpCover lp = bound_detail::lpCover(p_, m_, g.ops, neighbours<uint64_t>(g.ops, false), opCompute_,
                                                         bo_.lp_parts, bo_.give_up, bo_.args);
  if (!lp.done) return false;
  if (static_cast<double>(lp.value) <= g.value) return true;
  up = g;
  up->method = BoundMethod::Lp;
  up->value = static_cast<double>(lp.value);
  up->parts = lp.parts;
  up->cover.clear();
  for (const auto& part : lp.cover)
    up->cover.push_back({part.ops, partFloor(p_, m_, part.ops, nullptr, bo_.args, bo_.give_up ? &bo_.give_up : nullptr),
                         bo_.args.on(BoundArg::ForcedOps) ? forcedOps(p_, part.ops) : std::vector<OpId>{},
                         part.weight});
  return true;
}

// Step 7: the cover's linear relaxation (lp_relaxation.cpp) for each group of 21 to 64 ops that has
// only its floors, after the share bound (each relaxation is priced once, before the priced passes,
// and kept in lpGroups_; step 7 applies them to the components it ends with). A component's value
// stays min(sum of its groups, edge floor) with the raised groups (or its shares, if larger); the
// groups hold their subgraphs whatever edges link their ops, so the parts are grown along all of
// them. A component of at most 64 ops that a cut capped also takes its own relaxation, uncapped
// (below), where that is larger. Returns how much the total rose. (A component that step 6 re-priced is never one of
// these: prices go to tensors of exact covers only.)
LD Ruler::relaxedCovers(std::vector<BoundComponent>& components) {
  LD rise = 0;
  const bool lpOn = bo_.args.on(BoundArg::Lp);
  // A group's relaxation, priced once (lpGroups_): null when stopped (priced again next time),
  // else the raised group or none (not above g's value, or too many parts).
  auto relaxed = [&](const BoundGroup& g) -> const std::optional<BoundGroup>* {
    auto known = lpGroups_.find(g.ops);
    if (known == lpGroups_.end()) {
      if (bo_.give_up && bo_.give_up()) return nullptr;
      std::optional<BoundGroup> up;
      if (!lpRaise(g, up) && bo_.give_up && bo_.give_up()) return nullptr;
      known = lpGroups_.emplace(g.ops, std::move(up)).first;
    }
    return &known->second;
  };
  for (BoundComponent& c : components) {
    bool raised = false;
    for (BoundGroup& g : c.groups) {
      const int n = static_cast<int>(g.ops.size());
      if (g.method != BoundMethod::Floors || (n <= bo_.max_cover_ops && bo_.args.on(BoundArg::Cover)) || n > 64 ||
          !lpOn)
        continue;
      const std::optional<BoundGroup>* r = relaxed(g);
      if (!r || !*r) continue;
      g = **r;
      raised = true;
    }
    // The whole component as one group. Its relaxation grows its parts along every edge, so it
    // holds every valid subgraph of the component (each lies in one fusion component, V4), and
    // the edge floor no longer caps it: a subgraph keeping a cut edge inside is one of its parts.
    // Priced once (lpGroups_, keyed by its ops: where the cut left one group, the one just
    // raised) and taken where it beats the capped sum.
    const int n = static_cast<int>(c.ops.size());
    const bool exact = c.groups.size() == 1 && c.groups[0].method == BoundMethod::Cover;
    if (lpOn && !exact && n <= 64 && std::isfinite(c.edge_floor) &&
        !(n <= bo_.max_cover_ops && bo_.args.on(BoundArg::Cover))) {
      BoundGroup whole;
      whole.ops = c.ops;
      const std::optional<BoundGroup>* r = relaxed(whole);
      LD sum = 0;
      for (const BoundGroup& g : c.groups) sum += static_cast<LD>(g.value);
      if (r && *r && static_cast<LD>((*r)->value) > std::min(sum, static_cast<LD>(c.edge_floor))) {
        c.groups = {**r};
        c.edge_floor = std::numeric_limits<double>::infinity();
        raised = true;
      }
    }
    if (!raised) continue;
    LD sum = 0;
    for (const BoundGroup& g : c.groups) sum += static_cast<LD>(g.value);
    const LD value = std::min(sum, static_cast<LD>(c.edge_floor));
    if (value > static_cast<LD>(c.value)) {
      rise += value - static_cast<LD>(c.value);
      c.value = static_cast<double>(value);
      c.by_shares = false;
    }
  }
  return rise;
}

// Step 9: the large-parts relaxation (boundedRelaxation) of each component of at least
// BoundOptions::large_from ops that the exact cover did not price, with the share bound's shares
// as the caps (none computed: 0, which holds too); the component at the larger of its value and
// that. Rounds of K = 4, 5, ... up to BoundOptions::large_part_ops (each round's figure is a bound:
// an anytime rise, published after each), while the time lasts and a component's parts stay within
// BoundOptions::large_parts sets. Returns how much the total rose. A component here is never priced
// (prices go to tensors of exact covers only), so its value is a bound of its own subgraphs, as
// the relaxation's is.
LD Ruler::largeCovers(std::vector<BoundComponent>& components, LD total) {
  LD rise = 0;
  if (!bo_.args.on(BoundArg::LargeParts) || bo_.large_parts <= 0 || bo_.large_part_ops < 1) return 0;
  struct Large {
    BoundComponent* c;
    std::vector<LD> shares;                    // the caps (0 where none were computed)
    LD paid = 0;                               // their sum: the share bound
    std::vector<std::vector<int32_t>> around;  // grown along every edge (as relaxedCovers' groups)
    bool done = false;                         // too many parts, stopped, or nothing more to gain
  };
  std::vector<Large> large;
  for (BoundComponent& c : components) {
    const bool cover = c.groups.size() == 1 && c.groups[0].method == BoundMethod::Cover;
    if (cover || static_cast<int>(c.ops.size()) < bo_.large_from) continue;
    Large l{&c, std::vector<LD>(c.ops.size(), 0), 0, neighbourLists(c.ops)};
    if (c.op_shares.size() == c.ops.size())
      for (size_t j = 0; j < l.shares.size(); ++j) l.paid += l.shares[j] = std::max<LD>(0, c.op_shares[j]);
    large.push_back(std::move(l));
  }
  std::map<std::vector<OpId>, LD> known;  // part floors priced in earlier rounds
  for (int K = std::min(4, bo_.large_part_ops); K <= bo_.large_part_ops; ++K) {
    for (Large& l : large) {
      if (l.done) continue;
      if (stopNow() || (bo_.give_up && bo_.give_up())) return rise;
      BoundComponent& c = *l.c;
      const LpCover lp = boundedRelaxation(p_, m_, c.ops, l.around, opCompute_, K, l.shares, bo_.large_parts,
                                           bo_.give_up, bo_.args, &known);
      if (!lp.done && stopNow()) return rise;  // the caller is ending: ask nothing more
      // No larger K for a component stopped, with too many parts, with no small op, or (two rounds,
      // K = 4, 5) with nothing above its shares: cnn-n1000, seed 9202, spent 1.4 s for nothing.
      // Effort only: every round's figure is a bound.
      l.done = !lp.done || lp.large == static_cast<int>(c.ops.size()) || (K >= 5 && lp.value <= l.paid * (1 + 1e-9L));
      if (!lp.done) continue;
      c.large_parts = std::max(c.large_parts, static_cast<double>(lp.value));
      if (lp.value > static_cast<LD>(c.value) * (1 + 1e-12L)) {  // not the shares again, rounded
        rise += lp.value - static_cast<LD>(c.value);
        c.value = static_cast<double>(lp.value);
        c.by_large_parts = true;
      }
    }
    publish(static_cast<double>((total + rise) * (1 - 1e-12L)));
  }
  return rise;
}

}  // namespace mlsys::bound_detail
