// The one enumerator of connected op sets (issue 50): the bound's exact cover, its linear
// relaxation and its share bound, the exact solver and the beam's candidate library all list
// their subgraph candidates with it.
//
// Breadth first from the start sets: a set is grown by each node adjacent to it and not in it
// (its members in order, their neighbours in the order given), each set visited once, so smaller
// sets come first. `keep(set)` false drops a set and does not grow it: every connected set that
// contains a start set is still reached, provided the rejection is upward closed (every superset of
// a rejected set is rejected too): then each kept set S has a kept chain from a start set, S less
// one node at a time in the reverse order of a breadth-first search of S. `visit(set)` gets each
// kept set, in visiting order, and returns false to stop.
//
// Two representations of a set, one algorithm: bits of a uint64_t over local nodes 0..63
// (MaskSets), or the sorted node ids of any graph (ListSets).
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <unordered_set>
#include <vector>

namespace mlsys {

// Non-empty masks seen so far: open addressing in one array (0 is empty), so that millions of
// sets cost one allocation to free (a node-based set took tens of milliseconds).
class MaskSeen {
 public:
  struct Inserted {
    bool second;
  };
  Inserted insert(uint64_t s) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = slot(s);
    if (slots_[i] == s) return {false};
    slots_[i] = s;
    ++size_;
    return {true};
  }
  size_t count(uint64_t s) const { return slots_.empty() ? 0 : slots_[slot(s)] == s; }
  // A doubling of millions of slots takes tens of milliseconds: it polls `stop` (when set) every
  // 65,536 slots and, when told to, leaves the set half-moved: abandoned() (the caller stops).
  void setStop(const std::function<bool()>* stop) { stop_ = stop; }
  bool abandoned() const { return abandoned_; }

 private:
  size_t slot(uint64_t s) const {
    const size_t mask = slots_.size() - 1;
    size_t i = static_cast<size_t>((s ^ (s >> 29)) * 0x9E3779B97F4A7C15ull) & mask;
    while (slots_[i] != 0 && slots_[i] != s) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<uint64_t> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : 2 * old.size(), 0);
    for (size_t k = 0; k < old.size(); ++k) {
      if ((k & 65535) == 65535 && stop_ && *stop_ && (*stop_)()) {
        abandoned_ = true;
        return;
      }
      if (old[k]) slots_[slot(old[k])] = old[k];
    }
  }
  std::vector<uint64_t> slots_;
  size_t size_ = 0;
  const std::function<bool()>* stop_ = nullptr;
  bool abandoned_ = false;
};

// Sets of at most 64 local nodes as bit masks; nb[v]: v's neighbours as a mask.
struct MaskSets {
  using Set = uint64_t;
  using Seen = MaskSeen;
  const std::vector<uint64_t>& nb;
  static Set single(int v) { return uint64_t{1} << v; }
  // Calls f(set with v added) for every neighbour v of s not in s, lowest bit first.
  template <class F>
  void grow(Set s, F f) const {
    uint64_t around = 0;
    for (uint64_t m = s; m; m &= m - 1) around |= nb[static_cast<size_t>(__builtin_ctzll(m))];
    for (around &= ~s; around; around &= around - 1) f(s | (around & (~around + 1)));
  }
  struct Hash {
    size_t operator()(Set s) const { return std::hash<uint64_t>()(s); }
  };
};

// Sets of node ids (sorted vectors) of a graph of any size; nb(v, f) calls f(u) for each
// neighbour u of v (in the order the grown sets are visited).
template <class Neighbours>
struct ListSets {
  using Set = std::vector<int32_t>;
  struct Hash;
  using Seen = std::unordered_set<Set, Hash>;
  Neighbours nb;
  static Set single(int32_t v) { return {v}; }
  template <class F>
  void grow(const Set& s, F f) const {
    for (int32_t v : s)
      nb(v, [&](int32_t u) {
        auto at = std::lower_bound(s.begin(), s.end(), u);
        if (at != s.end() && *at == u) return;
        Set t;
        t.reserve(s.size() + 1);
        t.insert(t.end(), s.begin(), at);
        t.push_back(u);
        t.insert(t.end(), at, s.end());
        f(std::move(t));
      });
  }
  struct Hash {
    size_t operator()(const Set& s) const {
      size_t h = s.size();
      for (int32_t v : s) h = h * 1000003u ^ static_cast<size_t>(v);
      return h;
    }
  };
};
template <class Neighbours>
ListSets<Neighbours> listSets(Neighbours nb) {
  return ListSets<Neighbours>{std::move(nb)};
}

// What forEachConnectedSet did: complete, or why not.
enum class Enumerated : uint8_t { All, Stopped, TooMany };

// Visits every kept connected set grown from `starts` (see the top of the file). Past
// `maxVisited` sets visited (kept or not) it gives up: TooMany. `stop` (when set) is polled every
// 16 sets: Stopped. `visit` returning false: Stopped.
template <class Sets, class Keep, class Visit>
Enumerated forEachConnectedSet(const Sets& sets, const std::vector<typename Sets::Set>& starts, Keep keep, Visit visit,
                               long maxVisited, const std::function<bool()>& stop = {}) {
  using Set = typename Sets::Set;
  typename Sets::Seen seen;
  constexpr bool kPolls = requires { seen.setStop(&stop); };
  if constexpr (kPolls) seen.setStop(&stop);
  std::vector<Set> queue;
  for (const Set& s : starts)
    if (seen.insert(s).second) queue.push_back(s);
  if (static_cast<long>(queue.size()) > maxVisited) return Enumerated::TooMany;
  for (size_t i = 0; i < queue.size(); ++i) {
    if ((i & 15) == 15 && stop && stop()) return Enumerated::Stopped;
    const Set s = queue[i];
    if (!keep(s)) continue;  // and no superset through it
    if (!visit(s)) return Enumerated::Stopped;
    bool tooMany = false;
    sets.grow(s, [&](Set next) {
      if (tooMany || seen.count(next)) return;
      seen.insert(next);
      queue.push_back(std::move(next));
      tooMany = static_cast<long>(queue.size()) > maxVisited;
    });
    if (tooMany) return Enumerated::TooMany;
    if constexpr (kPolls)
      if (seen.abandoned()) return Enumerated::Stopped;
  }
  return Enumerated::All;
}

}  // namespace mlsys
