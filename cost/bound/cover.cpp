// Argument "cover": the cheapest cover of a small component by its connected parts.
//
// Every subgraph of a schedule lies inside one fusion component (its ops are linked by tensors made
// and read inside it, V4, along edges some valid subgraph can keep inside, V9). Take the subgraphs
// of one component in schedule order: each op of the component runs in at least one of them (V2),
// and the first subgraph that runs an op never has it forced (forced_ops.cpp). So the subgraphs
// that first run each op cover the component's ops by connected parts, each counting its unforced
// ops (and, with "readers", the (maker, reader) pairs it serves: readers.cpp), and each costs at
// least its part floor (part_floor.cpp); the other subgraphs cost at least 0. Hence the cheapest
// such cover (a dp over the covered bits: the lowest uncovered bit is covered next, every part that
// covers it tried) is at most what the component's subgraphs cost. Parts are every connected op set
// (grown one adjacent op at a time, each once); parts with no valid granularity (an infinite floor)
// cover nothing.
#include "cost/bound/ruler.h"
#include "cost/model/connected_sets.h"

namespace mlsys::bound_detail {

namespace {
constexpr int kMaxCoverBits = 20;  // the cover's dp: ops and reader pairs served (2^bits states)
}  // namespace

// The connected parts of a group (bit j: ops[j]), each once: grow sets by one adjacent op,
// remembering those seen. False when there are more than BoundOptions::max_parts.
bool Ruler::connectedParts(const std::vector<OpId>& ops, std::vector<uint32_t>& parts) {
  const int n = static_cast<int>(ops.size());
  const std::vector<uint64_t> nb = neighbours<uint64_t>(ops, true);
  std::vector<uint64_t> starts;
  for (int v = 0; v < n; ++v) starts.push_back(MaskSets::single(v));
  const Enumerated e = forEachConnectedSet(
      MaskSets{nb}, starts, [](uint64_t) { return true; },
      [&](uint64_t s) {
        parts.push_back(static_cast<uint32_t>(s));
        return true;
      },
      bo_.max_parts, bo_.give_up);
  return e == Enumerated::All;
}

// The cheapest cover of a group's ops by its connected parts (parts may overlap:
// recomputation), each priced by partFloor and counted for its unforced ops (coverMasks) and the
// readers it serves (readerMasks): a dp over covered sets, where the lowest uncovered bit is
// covered next. Sets bg's method, value, parts and cover; false when no cover is finite.
bool Ruler::cheapestCover(const std::vector<OpId>& ops, const std::vector<uint32_t>& parts, BoundGroup& bg) const {
  const int n = static_cast<int>(ops.size());
  auto opsOf = [&](uint32_t mask) {
    std::vector<OpId> part;
    for (int j = 0; j < n; ++j)
      if (mask >> j & 1) part.push_back(ops[j]);  // topological, as ops is
    return part;
  };
  std::vector<PartFloor> f(parts.size());
  const std::function<bool()>* stop = bo_.give_up ? &bo_.give_up : nullptr;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (stop && (*stop)()) return false;  // out of time: the group gets its floors
    f[i] = partFloor(p_, m_, opsOf(parts[i]), &prices_, bo_.args, stop);
  }
  partsPriced_ += static_cast<long>(parts.size());
  // Under prices a part that keeps a priced tensor out earns its price, and could go below 0:
  // then a schedule could run it again and again (recomputation), earning each time, and the
  // cover, which counts each op's first run only, would be above it. Such prices prove nothing
  // (tieRetention drops the pass and lowers them).
  if (!prices_.empty())
    for (size_t i = 0; i < parts.size(); ++i)
      if (f[i].value < 0)
        for (TensorId t : f[i].retained) negativeOut_.push_back(t);
  std::vector<uint32_t> covers = bo_.args.on(BoundArg::ForcedOps) ? bound_detail::coverMasks(p_, ops, parts) : parts,
                        served(parts.size(), 0);
  const int bits =
      n + (bo_.args.on(BoundArg::Readers) ? bound_detail::readerMasks(p_, ops, parts, kMaxCoverBits, served) : 0);
  for (size_t i = 0; i < parts.size(); ++i) covers[i] |= served[i];
  std::vector<std::vector<int>> byLow(bits);
  for (size_t i = 0; i < parts.size(); ++i)
    if (std::isfinite(f[i].value))
      for (int j = 0; j < bits; ++j)
        if (covers[i] >> j & 1) byLow[j].push_back(static_cast<int>(i));
  const uint32_t full = bits == 32 ? ~0u : (1u << bits) - 1;
  // 24 MB at 20 bits: filled 65,536 entries at a time, polling the stop between (13 ms at once).
  // (Growing in place: each vector is reserved first, so no step copies what it holds.)
  const size_t states = size_t{full} + 1;
  std::vector<LD> dp;
  std::vector<int> how;
  std::vector<uint32_t> from;
  dp.reserve(states);
  how.reserve(states);
  from.reserve(states);
  for (size_t at = 0; at < states; at += 65536) {
    if (at && stop && (*stop)()) return false;
    const size_t to = std::min(states, at + 65536);
    dp.resize(to, std::numeric_limits<LD>::infinity());
    how.resize(to, -1);
    from.resize(to, 0);
  }
  dp[0] = 0;
  for (uint32_t mask = 0; mask < full; ++mask) {
    if ((mask & 16383) == 16383 && stop && (*stop)()) return false;  // 2^bits masks: tens of ms at 20 bits
    if (!std::isfinite(static_cast<double>(dp[mask]))) continue;
    const int low = __builtin_ctz(~mask);
    for (int i : byLow[low]) {
      const uint32_t nm = mask | covers[i];
      const LD v = dp[mask] + f[i].value;
      if (v < dp[nm]) {
        dp[nm] = v;
        how[nm] = i;
        from[nm] = mask;
      }
    }
  }
  if (!std::isfinite(static_cast<double>(dp[full]))) return false;
  bg.method = BoundMethod::Cover;
  bg.parts = static_cast<long>(parts.size());
  bg.value = static_cast<double>(dp[full]);
  for (uint32_t mask = full; mask && how[mask] >= 0; mask = from[mask]) {
    const int i = how[mask];
    std::vector<OpId> recomputed = opsOf(parts[i] & ~covers[i]);
    std::sort(recomputed.begin(), recomputed.end());
    bg.cover.push_back({opsOf(parts[i]), f[i], std::move(recomputed)});
  }
  return true;
}

// The floor of a group of ops that every subgraph of theirs stays inside: its cheapest cover
// when the group is small enough (and time remains) and every part can be enumerated, else its
// "floors".
BoundGroup Ruler::groupBound(const std::vector<OpId>& ops) {
  BoundGroup bg;
  bg.ops = ops;
  const int n = static_cast<int>(ops.size());
  bool covered = false;
  if (n <= bo_.max_cover_ops && bo_.args.on(BoundArg::Cover) && !(bo_.give_up && bo_.give_up())) {
    std::vector<uint32_t> parts;
    if (connectedParts(ops, parts)) covered = cheapestCover(ops, parts, bg);
  }
  if (!covered) {
    bg.method = BoundMethod::Floors;
    bg.value = static_cast<double>(floors(ops));
  }
  // The cover keeps at most kMaxCoverBits bits of ops and reader pairs; where the group's pairs do
  // not all fit, its linear relaxation, which keeps every pair (lp_relaxation.cpp), may lie higher,
  // and the larger of the two bounds counts. Only in the unpriced pass: a priced pass's covers
  // carry retention price terms, which every component touching a priced tensor must count, and
  // prices go only to tensors whose maker and readers all lie in exact covers
  // (retention_prices.cpp), so no priced tensor touches a group priced so (its ops are reused
  // from the unpriced pass).
  const bool relax = covered && prices_.empty() && bo_.args.on(BoundArg::Lp) && bo_.args.on(BoundArg::Readers);
  int pairs = 0;
  if (relax) readerElements(p_, ops, {}, pairs);
  if (relax && n + pairs > kMaxCoverBits && !(bo_.give_up && bo_.give_up())) {
    std::optional<BoundGroup> up;
    if (lpRaise(bg, up) && up) bg = std::move(*up);
  }
  return bg;
}

}  // namespace mlsys::bound_detail
