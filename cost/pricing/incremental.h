// Incremental schedule evaluation for the search: price a proposed change in microseconds,
// exactly as the full evaluator would, without mutating the schedule; then apply it.
//
// Every move is expressed as a Change: replace the subgraphs [first, first+count) by `repl`.
// Only the replaced subgraphs and the one after them (whose retained-in set may change) are
// re-costed; availability (V5), coverage (V2) and graph outputs (V7) are re-checked only for
// the tensors and ops the change touches. Subgraph costs are memoised in a bounded cache keyed
// by everything that determines them (ops, granularity, traversal, retained in and out).
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "cost/model/stop.h"
#include "cost/pricing/evaluator.h"

namespace mlsys {

// Subgraphs that need the step walk (see SubgraphPlan::fast_ok) and have more steps than this
// are not offered to the search.
inline constexpr i64 kMaxSearchWalkSteps = 1 << 16;
// The search uses non-raster traversal orders only on grids of at most this many tiles: the
// output format writes them out tile by tile (about 9 bytes a tile, ~9 MB here).
inline constexpr i64 kMaxWrittenOrderTiles = 1 << 20;

struct Change {
  int first = 0;
  int count = 0;
  std::vector<SubgraphSched> repl;
  // The change that replaces subgraph s by `by`.
  static Change replaceOne(int s, SubgraphSched by) {
    Change c;
    c.first = s;
    c.count = 1;
    c.repl = {std::move(by)};
    return c;
  }
};

// What the search needs to know about one priced subgraph.
struct CachedCost {
  bool valid = false;
  Rule rule = Rule::None;
  double latency = 0;
  std::vector<TensorId> written;   // O(S) minus retained
  std::vector<TensorId> boundary;  // boundary inputs
};

// A subgraph's price without what it writes and reads (IncrementalEvaluator::peek, the choosers).
struct CachedPrice {
  bool valid = false;
  Rule rule = Rule::None;
  double latency = 0;
};

struct DeltaEval {
  bool valid = false;
  Rule rule = Rule::None;  // first violated rule
  double total = 0;        // new total latency (valid or not: sum of the priced parts)
  double delta = 0;        // total - current total
  // What evaluate() priced, for apply(): the costs of the replacement subgraphs and of the
  // subgraph after the range (null if none), entries of the cache, valid while the cache stays
  // at `epoch` (its epoch when evaluate() began).
  std::vector<const CachedCost*> repl;
  const CachedCost* next = nullptr;
  uint64_t epoch = 0;
  // The costs, when the cache turned over twice during evaluate() (then repl and next point here,
  // for evaluate() itself; apply() looks them up again).
  std::vector<CachedCost> owned;
};

// What a subgraph's cost depends on (its ops, granularity, traversal, the tensors retained into it
// and out of it), as the cost cache's key: `key` is overwritten.
void subgraphKey(const SubgraphSched& sg, const std::vector<TensorId>& rin, std::vector<i64>& key);

// Bounded memo of subgraph costs. Owned by one worker (no locking). When full, the older half
// generation is dropped (a two-generation approximation of LRU).
class CostCache {
 public:
  explicit CostCache(size_t capacity = 1 << 16) : cap_(capacity < 1024 ? 1024 : capacity) { cur_.reserve(cap_ / 2); }
  // The entry under key (promoted from the older generation when `promote`), or null.
  const CachedCost* find(uint64_t h, const std::vector<i64>& key, bool promote = true);
  const CachedCost& insert(uint64_t h, std::vector<i64> key, CachedCost c);
  uint64_t hits = 0, misses = 0;
  size_t size() const { return cur_.size() + old_.size(); }
  void clear() {
    cur_.clear();
    old_.clear();
    ++epoch_;
  }
  // Changes whenever an entry handed out may have been freed or overwritten: pointers returned
  // under one epoch stay valid while it lasts.
  uint64_t epoch() const { return epoch_; }

 private:
  struct Entry {
    std::vector<i64> key;
    CachedCost cost;
  };
  size_t cap_;
  uint64_t epoch_ = 0;
  // One entry per 64-bit hash; the full key is compared, and a colliding key replaces the entry.
  std::unordered_map<uint64_t, Entry> cur_, old_;
};

class IncrementalEvaluator {
 public:
  IncrementalEvaluator(const Problem& p, const ModelOptions& m, size_t cache_capacity = 1 << 16);

  // Full (re)initialisation from a schedule. On a stop request (setStop) it is abandoned and leaves
  // an empty, invalid state.
  void reset(const Schedule& s);
  // The token reset() checks every 64 subgraphs (a rebuild on 200,000 ops takes ~0.1 s).
  void setStop(StopToken stop) { stop_ = stop; }
  const Schedule& schedule() const { return s_; }
  double total() const { return total_; }
  bool valid() const { return valid_; }
  int size() const { return static_cast<int>(s_.subgraphs.size()); }
  double latency(int i) const { return lat_[i]; }
  const CachedCost& info(int i) const { return infos_[i]; }
  const std::vector<TensorId>& retainedInto(int i) const;
  // The last subgraph before position i that writes tensor t to slow memory, or -1.
  int lastWriterBefore(TensorId t, int i) const {
    const auto& v = writers_[t];
    auto it = std::lower_bound(v.begin(), v.end(), i);
    return it == v.begin() ? -1 : *std::prev(it);
  }

  // The sorted positions of the subgraphs that read tensor t as a boundary input.
  const std::vector<int>& boundaryReaders(TensorId t) const { return readers_[t]; }

  // Prices a change without mutating the schedule.
  DeltaEval evaluate(const Change& c);
  // Commits a change priced by evaluate() on the current schedule, with the costs evaluate()
  // looked up (looked up again only if the cache has moved to another epoch since). In debug
  // builds, asserts the result equals the full evaluator's (total and validity).
  void apply(const Change& c, const DeltaEval& d);

  // Cost of one subgraph in context (cached).
  const CachedCost& cost(const SubgraphSched& sg, const std::vector<TensorId>& rin);
  // The same price from the cache when it is there, else computed and not kept: for walks over
  // many candidates of which one is kept (bestGranularityCached), where keeping each churned the
  // cache (its inserts and evictions were a third of the beam's time on gemm-chain-n5000).
  CachedPrice peek(const SubgraphSched& sg, const std::vector<TensorId>& rin);

  // How many subgraphs of the schedule run op o (V2: at least 1 in a valid schedule).
  int runs(OpId o) const { return op_count_[o]; }
  CostCache& cache() { return cache_; }
  const Problem& problem() const { return p_; }
  const ModelOptions& model() const { return m_; }
  bool checkAgainstFull() const;  // recomputes with the full evaluator and compares

 private:
  // A subgraph's cost computed (planSubgraph, then costSubgraph or the limits a search keeps).
  CachedCost price(const SubgraphSched& sg, const std::vector<TensorId>& rin) const;
  void rebuildIndex();
  double sumLatencies() const;  // left to right: the total the search has always compared
  // Adds (sign +1) or removes (-1) subgraph i's entries in the V2/V5/V7 index.
  void index(int i, int sign);
  bool availabilityOk(const Change& c, const std::vector<const CachedCost*>& rc, const CachedCost* next) const;

  const Problem& p_;
  ModelOptions m_;
  StopToken stop_;
  CostCache cache_;
  Schedule s_;
  std::vector<double> lat_;
  std::vector<CachedCost> infos_;  // owned copies (cache entries may be evicted)
  double total_ = 0;
  bool valid_ = false;
  // Index for incremental V2/V5/V7: per op occurrence counts; per tensor the sorted subgraph
  // indices that write it and that read it as a boundary input.
  std::vector<int> op_count_;
  std::vector<std::vector<int>> writers_, readers_;
  mutable std::vector<int> scratch_op_, scratch_t_;
};

}  // namespace mlsys
