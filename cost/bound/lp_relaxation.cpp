// The cover's linear relaxation over every valid part of a group too large for the exact cover, or
// of one whose reader pairs the exact cover could not all keep (internal.h, lpCover; Ruler::lpRaise
// serves step 7 below and cover.cpp's groupBound).
//
// The argument. A schedule runs every op in some subgraph, the first one that runs it, where the
// op is not forced (forced_ops.cpp, coverMasks), and each subgraph S is a connected part of
// the group (a group holds every subgraph of its ops) that pays at least partFloor(S). So for any
// shares y >= 0 with sum over S's unforced ops of y <= partFloor(S) for *every* valid connected
// part S, latency = sum over subgraphs of their latencies >= sum over ops of y. The best such y
// is a linear programme (the dual of the cover's relaxation), solved here by COIN-OR CLP over the
// parts; it needs every valid part, so the parts are enumerated whole: grown one adjacent op at a
// time from every op, as the exact cover does, leaving out the sets that hold an upward-closed
// invalidity (forcedInvalid, or two ops whose forced output shapes never meet, A-6: every superset
// is invalid too, so no valid part is reached only through them) and every part whose floor is
// infinite (no granularity is valid: no constraint). When there are more than maxVisited sets the
// group gets nothing from here.
// With "readers" the cover's elements are the group's ops and the readers argument's pairs
// (readers.cpp): every schedule serves each pair (o, d) of an unretainable output of o by a subgraph
// holding o and d, or o and no reader (servedElements below), so y has a share for each pair too, and
// a part pays the shares of its unforced ops and of the pairs it serves (the same cover argument, one
// more kind of element; the subgraphs that first run each op and those that serve each pair are
// among the schedule's, each paying at least its floor).
// The large-parts relaxation (boundedRelaxation) runs the same programme with caps: relaxations.cpp
// states its argument.
// The solver's y is repaired before it counts: negative entries go to 0 and, where a part's
// unforced shares exceed its floor (the solver's tolerance), that part's shares are scaled down to
// it (shares only fall, so no other part's constraint breaks), so the constraints hold in the
// arithmetic the bound reports.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include <coin/ClpEventHandler.hpp>
#include <coin/ClpSimplex.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include "cost/bound/bound.h"
#include "cost/bound/internal.h"
#include "cost/bound/ruler.h"
#include "cost/model/connected_sets.h"

namespace mlsys::bound_detail {

namespace {

// Any subgraph S pays at least its ops' compute floors and its loads of the tensors it reads and
// does not make that cannot be retained (V6, W1: never resident at its first step): a cheap floor
// that lets most parts' constraints be checked without partFloor.
LD quickFloor(const Problem& p, const std::vector<OpId>& part, const std::vector<LD>& opCompute,
              std::vector<char>& in) {
  for (OpId o : part) in[o] = 1;
  LD compute = 0, loads = 0;
  std::vector<TensorId> seen;
  for (OpId o : part) {
    compute += opCompute[o];
    for (TensorId t : p.ops[o].inputs) {
      const OpId pr = p.producer[t];
      if ((pr >= 0 && in[pr]) || retainable(p, t) || std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
      seen.push_back(t);
      loads += static_cast<LD>(p.size(t));
    }
  }
  for (OpId o : part) in[o] = 0;
  return std::max(compute, loads / static_cast<LD>(p.bandwidth));
}

// A part's local ops (bits of a mask for groups of at most 64 ops, else sorted indices).
template <class F>
void members(uint64_t S, F f) {
  for (; S; S &= S - 1) f(__builtin_ctzll(S));
}
template <class F>
void members(const std::vector<int32_t>& S, F f) {
  for (int32_t j : S) f(j);
}
size_t sizeOf(uint64_t S) { return static_cast<size_t>(__builtin_popcountll(S)); }
size_t sizeOf(const std::vector<int32_t>& S) { return S.size(); }
// A row's members: its part's unforced ops, then the reader elements it serves (none when `served`
// is empty: readers off).
template <class Set, class F>
void rowMembers(const std::vector<Set>& covers, const std::vector<std::vector<int32_t>>& served, size_t i, F f) {
  members(covers[i], f);
  if (!served.empty())
    for (int32_t e : served[i]) f(e);
}
bool contains(uint64_t S, int j) { return S >> j & 1; }
bool contains(const std::vector<int32_t>& S, int j) { return std::binary_search(S.begin(), S.end(), j); }

// The readers argument (readers.cpp) as further elements to cover, beyond the group's n ops: for
// each op o of the group whose one output t cannot be retained and has two readers or more, a pair
// (o, d) per reader d in the group, served by a part holding o and d, or o and no reader of t, and
// one element for all readers outside the group (they never share a subgraph with o), served by a
// part holding o and no reader of t. Per part, the elements it serves (numbered from n).
template <class Set>
std::vector<std::vector<int32_t>> servedElements(const Problem& p, const std::vector<OpId>& ops,
                                                 const std::vector<Set>& parts, int& elements,
                                                 std::vector<int32_t>* makerOf = nullptr) {
  const int n = static_cast<int>(ops.size());
  std::vector<std::vector<int32_t>> served(parts.size());
  elements = 0;
  std::unordered_map<OpId, int> local;
  for (int j = 0; j < n; ++j) local.emplace(ops[j], j);
  struct Maker {
    int j, first;                 // the maker's local index, its first element
    std::vector<int32_t> inside;  // its readers in the group (local indices)
    bool outside;
  };
  std::vector<Maker> makers;
  for (int j = 0; j < n; ++j) {
    const std::vector<OpId> readers = servedReaders(p, ops[j]);
    if (readers.empty()) continue;
    Maker mk{j, n + elements, {}, false};
    for (OpId d : readers) {
      const auto at = local.find(d);
      if (at == local.end()) mk.outside = true;
      else mk.inside.push_back(at->second);
    }
    elements += static_cast<int>(mk.inside.size()) + (mk.outside ? 1 : 0);
    if (makerOf) makerOf->resize(static_cast<size_t>(elements), j);
    makers.push_back(std::move(mk));
  }
  if (makers.empty()) return served;
  for (size_t i = 0; i < parts.size(); ++i)
    for (const Maker& mk : makers) {
      if (!contains(parts[i], mk.j)) continue;
      bool none = true;
      for (int32_t d : mk.inside) none = none && !contains(parts[i], d);
      int e = mk.first;
      for (int32_t d : mk.inside) {
        if (none || contains(parts[i], d)) served[i].push_back(e);
        ++e;
      }
      if (mk.outside && none) served[i].push_back(e);
    }
  return served;
}

// Every part of the group that no upward-closed invalidity rules out, smallest first (the one
// enumerator: cost/model/connected_sets.h): two ops whose forced output shapes never meet
// or forcedInvalid; with maxPartOps > 0, only the parts of at most that many ops (relaxationEstimate).
// False when more than maxVisited sets are visited or `stop` fires.
template <class Sets>
bool validParts(const Problem& p, const std::vector<OpId>& ops, const Sets& sets, long maxVisited, int maxPartOps,
                const std::function<bool()>& stop, std::vector<typename Sets::Set>& parts, long& visited,
                std::vector<char>* large = nullptr) {
  using Set = typename Sets::Set;
  const int n = static_cast<int>(ops.size());
  std::vector<std::optional<std::vector<Shape>>> shapes(n);
  for (int i = 0; i < n; ++i) {
    if ((i & 63) == 63 && stop && stop()) return false;
    shapes[i] = forcedShapes(p, ops[i]);
  }
  // Whether the part holds two ops that never share a valid subgraph: per op a mask of the others
  // (groups of at most 64 ops), else asked once per pair met (a large group's parts meet few).
  std::vector<uint64_t> neverMask;
  std::unordered_map<uint64_t, bool> never;
  if constexpr (std::is_same_v<Set, uint64_t>) {
    neverMask.assign(n, 0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (i != j && !mayShareSubgraph(shapes[i], shapes[j])) neverMask[i] |= uint64_t{1} << j;
  }
  auto apart = [&](int i, int j) {
    const uint64_t key = static_cast<uint64_t>(std::min(i, j)) << 32 | static_cast<uint32_t>(std::max(i, j));
    auto [it, fresh] = never.try_emplace(key, false);
    if (fresh) it->second = !mayShareSubgraph(shapes[i], shapes[j]);
    return it->second;
  };
  std::vector<char> in(p.numOps(), 0);
  visited = 0;
  std::vector<int32_t> local;
  auto keep = [&](const Set& S) {
    ++visited;
    const bool beyond = maxPartOps > 0 && static_cast<int>(sizeOf(S)) > maxPartOps;
    if (beyond && (!large || static_cast<int>(sizeOf(S)) > maxPartOps + 1)) return false;
    local.clear();
    members(S, [&](int j) { local.push_back(j); });
    if (beyond && std::all_of(local.begin(), local.end(), [&](int32_t j) { return (*large)[j] != 0; })) return false;
    if constexpr (std::is_same_v<Set, uint64_t>) {
      for (int32_t j : local)
        if (neverMask[j] & S) return false;
    } else {
      for (size_t a = 0; a < local.size(); ++a)
        for (size_t b = a + 1; b < local.size(); ++b)
          if (apart(local[a], local[b])) return false;
    }
    std::vector<OpId> part;
    for (int32_t j : local) part.push_back(ops[j]);
    for (OpId o : part) in[o] = 1;
    const bool invalid = forcedInvalid(p, in, part);
    for (OpId o : part) in[o] = 0;
    if (beyond && !invalid)
      for (int32_t j : local) (*large)[j] = 1;
    return !invalid && !beyond;
  };
  std::vector<Set> starts;
  for (int v = 0; v < n; ++v) starts.push_back(Sets::single(v));
  const Enumerated e = forEachConnectedSet(
      sets, starts, keep,
      [&](const Set& S) {
        parts.push_back(S);
        return true;
      },
      maxVisited, stop);
  return e == Enumerated::All;
}

// CLP's iterations stop when the caller's stop fires (status 5: not solved, nothing counts).
class StopEvents : public ClpEventHandler {
 public:
  explicit StopEvents(const std::function<bool()>* stop) : stop_(stop) {}
  int event(Event e) override { return e == endOfIteration && stop_ && *stop_ && (*stop_)() ? 0 : -1; }
  ClpEventHandler* clone() const override { return new StopEvents(*this); }

 private:
  const std::function<bool()>* stop_;
};

// One round of the relaxation over the active rows (the parts whose constraint is in the
// programme): y maximising sum y subject to each active part's unforced shares <= its floor, y >= 0,
// by CLP's dual simplex; then repaired so that every row holds exactly in the arithmetic the bound
// reports (negatives to 0, each row above its floor scaled down, below). False when not solved.
template <class Set>
bool solveRound(ClpSimplex& lp, const std::vector<Set>& covers, const std::vector<std::vector<int32_t>>& served,
                const std::vector<char>& active, const std::vector<LD>& floor, const std::vector<LD>& caps,
                std::vector<LD>& y, const std::function<bool()>& stop) {
  auto row = [&](size_t i, auto f) { rowMembers(covers, served, i, f); };
  std::vector<size_t> rows;
  for (size_t i = 0; i < covers.size(); ++i)
    if (active[i]) rows.push_back(i);
  std::vector<int> rowIndex, colIndex;
  std::vector<double> elements, rowUpper;
  for (size_t r = 0; r < rows.size(); ++r) {
    row(rows[r], [&](int j) { rowIndex.push_back(static_cast<int>(r)), colIndex.push_back(j), elements.push_back(1); });
    rowUpper.push_back(static_cast<double>(floor[rows[r]]));
  }
  CoinPackedMatrix matrix(true, rowIndex.data(), colIndex.data(), elements.data(),
                          static_cast<CoinBigIndex>(elements.size()));
  const double inf = COIN_DBL_MAX;
  const int cols = static_cast<int>(y.size());  // n ops, then the reader elements
  std::vector<double> colLower(cols, 0), colUpper(cols, inf), objective(cols, -1), rowLower(rows.size(), -inf);
  for (size_t j = 0; j < caps.size() && j < colUpper.size(); ++j)
    if (caps[j] < std::numeric_limits<LD>::infinity()) colUpper[j] = static_cast<double>(caps[j]);
  lp = ClpSimplex();
  lp.setLogLevel(0);
  matrix.setDimensions(static_cast<int>(rows.size()), cols);
  lp.loadProblem(matrix, colLower.data(), colUpper.data(), objective.data(), rowLower.data(), rowUpper.data());
  const StopEvents events(&stop);
  lp.passInEventHandler(&events);
  lp.dual();
  if (lp.status() != 0) return false;
  const double* sol = lp.primalColumnSolution();
  for (int j = 0; j < cols; ++j) {
    y[j] = std::max<LD>(0, static_cast<LD>(sol[j]));
    if (j < static_cast<int>(caps.size())) y[j] = std::min(y[j], caps[j]);  // the solver's tolerance
  }
  // Row by row: a row above its floor has its members' y scaled down to fit (y only shrinks, so every
  // other row's sum only falls and a row once repaired stays repaired); a floor of 0 or less sets its
  // members to 0. (A global scale by the worst row's ratio gave 0 everywhere when the solver left
  // 1e-12 on a single op whose floor is 0.) A row still above after that, by rounding, is zeroed.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i : rows) {
      LD sum = 0;
      row(i, [&](int j) { sum += y[j]; });
      if (sum <= floor[i]) continue;
      const LD f = pass == 0 && floor[i] > 0 ? floor[i] / sum * (1 - 1e-12L) : 0;
      row(i, [&](int j) { y[j] *= f; });
    }
  return true;
}

// The parts of positive weight in the relaxed cover (positive row duals: the parts it would run).
template <class Set, class OpsOf>
void coverParts(const ClpSimplex& lp, const std::vector<Set>& parts, const std::vector<char>& active,
                const std::vector<LD>& floor, OpsOf opsOf, LpCover& res) {
  const double* duals = lp.dualRowSolution();
  int r = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!active[i]) continue;
    if (std::fabs(duals[r]) > 1e-9)
      res.cover.push_back({opsOf(parts[i]), std::fabs(duals[r]), static_cast<double>(floor[i])});
    ++r;
  }
}

// Per part, its floor as `known` has it, else -1 (not priced yet).
template <class Set, class OpsOf>
std::vector<LD> knownFloors(const std::map<std::vector<OpId>, LD>* known, const std::vector<Set>& parts, OpsOf opsOf) {
  std::vector<LD> raw(parts.size(), -1);
  if (known)
    for (size_t i = 0; i < parts.size(); ++i)
      if (const auto at = known->find(opsOf(parts[i])); at != known->end()) raw[i] = at->second;
  return raw;
}

// The first rows (into `active`): the parts of one or two ops (`small`) and, for each column they
// leave out, the first valid part that counts it; a capped column needs none. Polled at every part:
// a part floor can take a millisecond, and 256 of them 25 ms. False when stopped, or when some op
// or reader element is in no valid part: no schedule (readers.cpp: every schedule serves each
// element), left to the floors.
template <class Row, class Counts, class Small, class FloorOf>
bool firstRows(size_t np, int cols, const std::vector<LD>& caps, Row row, Counts counts, Small small, FloorOf floorOf,
               const std::function<bool()>& stop, std::vector<char>& active) {
  const LD inf = std::numeric_limits<LD>::infinity();
  std::vector<char> covered(cols, 0);
  int uncovered = cols;
  for (int j = 0; j < static_cast<int>(caps.size()); ++j)
    if (caps[j] < inf) covered[j] = 1, --uncovered;
  auto cover = [&](size_t i) {
    active[i] = 1;
    row(i, [&](int j) { uncovered -= covered[j] ? 0 : 1, covered[j] = 1; });
  };
  auto coversNew = [&](size_t i) {
    bool any = false;
    row(i, [&](int j) { any = any || !covered[j]; });
    return any;
  };
  for (size_t i = 0; i < np; ++i) {
    if (stop && stop()) return false;
    if (counts(i) && small(i) && floorOf(i) < inf) cover(i);
  }
  for (size_t i = 0; i < np; ++i) {
    if (stop && stop()) return false;
    if (!active[i] && coversNew(i) && floorOf(i) < inf) cover(i);
  }
  return uncovered == 0;
}

// The relaxation over the parts of `sets` (masks or lists of the group's local ops).
template <class Sets>
LpCover lpCoverOf(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops, const Sets& sets,
                  const std::vector<LD>& opCompute, long maxVisited, int maxPartOps, const std::function<bool()>& stop,
                  const BoundArgs& args, const std::vector<LD>* shares = nullptr,
                  std::map<std::vector<OpId>, LD>* known = nullptr) {
  using Set = typename Sets::Set;
  LpCover res;
  const int n = static_cast<int>(ops.size());
  if (n == 0 || maxVisited <= 0 || !args.on(BoundArg::PartFloors)) return res;
  auto opsOf = [&](const Set& S) {
    std::vector<OpId> part;
    members(S, [&](int j) { part.push_back(ops[j]); });  // topological, as ops is
    return part;
  };
  std::vector<Set> parts;
  // Bounded (boundedRelaxation): the ops in a valid part of maxPartOps + 1 ops are large.
  std::vector<char> large;
  if (shares) large.assign(n, 0);
  if (!validParts(p, ops, sets, maxVisited, maxPartOps, stop, parts, res.visited, shares ? &large : nullptr))
    return res;
  if (shares && std::find(large.begin(), large.end(), 0) == large.end()) return sharesOnly(*shares);
  // Each part counts for its unforced ops (forced_ops.cpp).
  std::vector<Set> covers = args.on(BoundArg::ForcedOps) ? coverMasks(p, ops, parts, stop) : parts;
  // And the reader elements each part serves (readers.cpp; numbered from n): y has a share for each.
  int elements = 0;
  std::vector<int32_t> makerOf;
  const std::vector<std::vector<int32_t>> served = args.on(BoundArg::Readers)
                                                       ? servedElements(p, ops, parts, elements, &makerOf)
                                                       : std::vector<std::vector<int32_t>>{};
  auto row = [&](size_t i, auto f) { rowMembers(covers, served, i, f); };
  auto counts = [&](size_t i) { return sizeOf(covers[i]) > 0 || (!served.empty() && !served[i].empty()); };
  const size_t np = parts.size();
  std::vector<char> in(p.numOps(), 0);
  std::vector<LD> quick(np);
  for (size_t i = 0; i < np; ++i) {
    if ((i & 255) == 0 && stop && stop()) return res;
    quick[i] = quickFloor(p, opsOf(parts[i]), opCompute, in);
    if (shares) {  // S also pays its ops' shares (shares.cpp): the larger floor holds
      LD paid = 0;
      members(parts[i], [&](int j) { paid += (*shares)[j]; });
      quick[i] = std::max(quick[i], paid);
    }
  }
  const LD unknown = -1;
  std::vector<LD> floor(np, unknown);
  // A part floor (bounded: also at least the part's shares); floors already priced come from `known`.
  std::vector<LD> raw = knownFloors(known, parts, opsOf);
  auto priced = [&](size_t i) {
    if (raw[i] == unknown)
      raw[i] = static_cast<LD>(partFloor(p, m, opsOf(parts[i]), nullptr, args, stop ? &stop : nullptr).value);
    const LD f = raw[i];
    return f < std::numeric_limits<LD>::infinity() ? std::max(f, shares ? quick[i] : f) : f;
  };
  auto floorOf = [&](size_t i) {
    if (floor[i] == unknown) {
      floor[i] = priced(i);
      ++res.parts;
    }
    return floor[i];
  };
  // Rows: first the parts of one or two ops and, for each op they leave out, the first valid part
  // that counts it; then the parts the solution breaks, until it breaks none (row generation:
  // a part whose quick floor already pays the shares holds without its partFloor).
  const int cols = n + elements;
  const std::vector<LD> caps = capsOf(large, shares, makerOf, elements);  // capped columns need no row
  std::vector<char> active(np, 0);
  auto small = [&](size_t i) { return sizeOf(parts[i]) <= 2; };
  if (!firstRows(np, cols, caps, row, counts, small, floorOf, stop, active)) return res;
  std::vector<LD> y(cols, 0);
  ClpSimplex lp;
  for (;;) {
    if (stop && stop()) return res;
    if (!solveRound(lp, covers, served, active, floor, caps, y, stop)) return res;  // not solved: nothing from here
    // The parts the shares break: those above their cheap floor get their partFloor (in
    // parallel: each floor is a pure function of its part, so the rows are the same at any
    // thread count), and those above it become rows.
    std::vector<size_t> check, fresh;
    std::vector<LD> sums(np, 0);
    for (size_t i = 0; i < np; ++i) {
      if ((i & 4095) == 4095 && stop && stop()) return res;  // np x n: 10 ms at 300,000 parts
      if (active[i] || !counts(i)) continue;
      row(i, [&](int j) { sums[i] += y[j]; });
      if (sums[i] <= quick[i]) continue;
      check.push_back(i);
      if (floor[i] == unknown) fresh.push_back(i);
    }
    std::atomic<bool> stopped = false;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, fresh.size(), 16), [&](const tbb::blocked_range<size_t>& r) {
      if (stopped || (stop && stop())) {
        stopped = true;
        return;
      }
      for (size_t c = r.begin(); c != r.end(); ++c) floor[fresh[c]] = priced(fresh[c]);
    });
    if (stopped) return res;
    res.parts += static_cast<long>(fresh.size());
    long added = 0;
    for (size_t i : check)
      if (sums[i] > floor[i]) active[i] = 1, ++added;
    if (!added) break;
  }
  if (known)
    for (size_t i = 0; i < np; ++i)
      if (raw[i] >= 0) known->emplace(opsOf(parts[i]), raw[i]);
  res.shares.assign(y.begin(), y.begin() + n);
  res.reader_shares.assign(y.begin() + n, y.end());
  for (LD v : y) res.value += v;
  coverParts(lp, parts, active, floor, opsOf, res);
  res.done = true;
  res.large = static_cast<int>(std::count(large.begin(), large.end(), 1));
  return res;
}

}  // namespace

std::vector<std::vector<int32_t>> readerElements(const Problem& p, const std::vector<OpId>& ops,
                                                 const std::vector<uint64_t>& parts, int& elements) {
  return servedElements(p, ops, parts, elements);
}

LpCover lpCover(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                const std::vector<uint64_t>& around, const std::vector<LD>& opCompute, long maxVisited,
                const std::function<bool()>& stop, const BoundArgs& args) {
  if (ops.size() > 64) return {};
  return lpCoverOf(p, m, ops, MaskSets{around}, opCompute, maxVisited, 0, stop, args);
}

LpCover relaxationEstimate(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                           const std::vector<std::vector<int32_t>>& around, const std::vector<LD>& opCompute,
                           int maxPartOps, long maxVisited, const std::function<bool()>& stop) {
  auto nb = [&around](int32_t v, auto f) {
    for (int32_t u : around[v]) f(u);
  };
  return lpCoverOf(p, m, ops, listSets(nb), opCompute, maxVisited, maxPartOps, stop, BoundArgs{});
}

LpCover boundedRelaxation(const Problem& p, const ModelOptions& m, const std::vector<OpId>& ops,
                          const std::vector<std::vector<int32_t>>& around, const std::vector<LD>& opCompute,
                          int maxPartOps, const std::vector<LD>& shares, long maxVisited,
                          const std::function<bool()>& stop, const BoundArgs& args,
                          std::map<std::vector<OpId>, LD>* known) {
  if (maxPartOps < 1 || shares.size() != ops.size()) return {};
  auto nb = [&around](int32_t v, auto f) {
    for (int32_t u : around[v]) f(u);
  };
  return lpCoverOf(p, m, ops, listSets(nb), opCompute, maxVisited, maxPartOps, stop, args, &shares, known);
}

}  // namespace mlsys::bound_detail
