#include "engine/search/order_beam.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>
#include <unordered_map>

#include "cost/model/connected_sets.h"
#include "cost/pricing/subgraph.h"
#include "engine/base/parallel.h"
#include "engine/exact/exact.h"

namespace mlsys {
namespace {

// Neighbours through a tensor one produces and the other consumes (V4 connectivity).
std::vector<OpId> neighbours(const Problem& p, OpId o) {
  std::vector<OpId> v;
  for (TensorId t : p.ops[o].inputs)
    if (p.producer[t] >= 0) v.push_back(p.producer[t]);
  for (TensorId t : p.ops[o].outputs)
    for (OpId c : p.consumers[t]) v.push_back(c);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// Convex: no op outside S lies on a path between two ops of S. Forward search from S through
// outside ops, never past the last op of S in topological order.
bool convex(const Problem& p, const std::vector<OpId>& s) {
  int last = 0;
  for (OpId o : s) last = std::max(last, p.topo_pos[o]);
  std::vector<OpId> stack;
  std::set<OpId> seen;
  auto push = [&](OpId from) {
    for (TensorId t : p.ops[from].outputs)
      for (OpId c : p.consumers[t])
        if (p.topo_pos[c] < last && seen.insert(c).second) stack.push_back(c);
  };
  for (OpId o : s) push(o);
  while (!stack.empty()) {
    OpId x = stack.back();
    stack.pop_back();
    if (std::find(s.begin(), s.end(), x) != s.end()) continue;  // inside: paths through S are fine
    push(x);
    // An outside op that reaches back into S.
    for (TensorId t : p.ops[x].outputs)
      for (OpId c : p.consumers[t])
        if (std::find(s.begin(), s.end(), c) != s.end()) return false;
  }
  return true;
}

// False when a tensor produced and read inside (ephemeral: never written) is also read outside:
// without recomputation that reader could never get it (V5).
bool makeCandidate(const Problem& p, std::vector<OpId> ops, Candidate& c) {
  std::sort(ops.begin(), ops.end(), [&](OpId a, OpId b) { return p.topo_pos[a] < p.topo_pos[b]; });
  c = Candidate{};
  c.ops = ops;
  auto inside = [&](OpId o) { return std::find(ops.begin(), ops.end(), o) != ops.end(); };
  for (OpId o : ops)
    for (TensorId t : p.ops[o].outputs) {
      bool readInside = false, readOutside = false;
      for (OpId x : p.consumers[t]) (inside(x) ? readInside : readOutside) = true;
      if (readInside && (readOutside || p.is_graph_output[t])) return false;
    }
  c.inputs = boundaryInputs(p, ops);
  for (OpId o : ops) {
    for (TensorId t : p.ops[o].outputs) {
      bool readOutside = false;
      for (OpId x : p.consumers[t]) readOutside |= !inside(x);
      if (readOutside && !p.is_graph_output[t] && p.size(t) <= p.capacity) c.retainable.push_back(t);
    }
  }
  std::sort(c.retainable.begin(), c.retainable.end());
  return true;
}

}  // namespace

CandidateLibrary::CandidateLibrary(const Problem& p, const ModelOptions& m, int max_ops,
                                   const std::function<bool()>& stop, size_t max_per_op)
    : p_(p), m_(m), with_op_(p.numOps()) {
  const int n = p.numOps();
  std::vector<std::vector<OpId>> nb(n);
  for (OpId o = 0; o < n; ++o) nb[o] = neighbours(p, o);
  // From each root v, the connected sets whose smallest op is v (grown through neighbours above
  // v; the one enumerator: cost/model/connected_sets.h), smallest first, up to max_ops ops and
  // max_per_op candidates a root (at most 64 times as many sets visited).
  std::vector<std::vector<Candidate>> perRoot(n);
  std::atomic<bool> cut{false};
  parallelFor(0, n, [&](int v) {
    if (cut.load(std::memory_order_relaxed)) return;
    if (stop()) {
      cut = true;
      return;
    }
    std::vector<Candidate>& outv = perRoot[v];
    auto above = [&](int32_t o, auto f) {
      for (OpId u : nb[o])
        if (u > v) f(u);
    };
    forEachConnectedSet(
        listSets(above), {{v}}, [&](const std::vector<OpId>& s) { return static_cast<int>(s.size()) <= max_ops; },
        [&](const std::vector<OpId>& s) {
          Candidate cand;
          if (convex(p, s) && makeCandidate(p, s, cand)) outv.push_back(std::move(cand));
          return outv.size() < max_per_op;
        },
        64 * static_cast<long>(max_per_op));
  });
  complete_ = !cut.load();
  for (auto& v : perRoot)
    for (auto& c : v) {
      const int id = static_cast<int>(cands_.size());
      for (OpId o : c.ops) with_op_[o].push_back(id);
      cands_.push_back(std::move(c));
    }
}

CandidateLibrary::Priced CandidateLibrary::price(int c, const std::vector<TensorId>& rin,
                                                 const std::vector<TensorId>& rout, const std::function<bool()>& stop) {
  std::vector<int64_t> key = {c};
  key.insert(key.end(), rin.begin(), rin.end());
  key.push_back(-1);
  key.insert(key.end(), rout.begin(), rout.end());
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  if (take_ && !take_()) return Priced{};
  GranResult g = exactGranularity(p_, m_, cands_[c].ops, rin, rout, stop);
  Priced pr{g.found, g.latency, g.g, g.trav};
  if (g.found && !g.proven) return pr;  // cut short: usable, not cached
  std::lock_guard<std::mutex> lk(mu_);
  cache_.emplace(std::move(key), pr);
  return pr;
}

size_t CandidateLibrary::priced() const {
  std::lock_guard<std::mutex> lk(mu_);
  return cache_.size();
}

namespace {

struct Node {
  int cand;
  std::vector<TensorId> rout;
  CandidateLibrary::Priced price;
  std::shared_ptr<const Node> parent;
};

struct State {
  std::vector<uint64_t> covered;
  int count = 0;
  std::vector<TensorId> resident;
  double cost = 0;
  std::shared_ptr<const Node> tail;
};

bool has(const std::vector<uint64_t>& bits, int i) { return (bits[static_cast<size_t>(i) >> 6] >> (i & 63)) & 1; }

}  // namespace

bool orderBeam(const Problem& p, CandidateLibrary& lib, int width, const std::function<bool()>& stop, Schedule& out,
               double& latency) {
  const int n = p.numOps();
  const size_t words = (static_cast<size_t>(n) + 63) / 64;
  std::vector<std::vector<State>> layers(n + 1);
  layers[0].push_back(State{std::vector<uint64_t>(words, 0), 0, {}, 0, nullptr});
  for (int c = 0; c < n; ++c) {
    if (stop()) return false;
    std::vector<State>& layer = layers[c];
    if (layer.empty()) continue;
    // Dominance (same covered and resident sets: the cheapest), then the width.
    std::sort(layer.begin(), layer.end(), [](const State& a, const State& b) { return a.cost < b.cost; });
    std::vector<State> kept;
    std::set<std::pair<std::vector<uint64_t>, std::vector<TensorId>>> seen;
    for (State& s : layer) {
      if (static_cast<int>(kept.size()) >= width) break;
      if (seen.emplace(s.covered, s.resident).second) kept.push_back(std::move(s));
    }
    layer.clear();
    std::vector<std::vector<State>> next(kept.size());
    parallelFor(size_t{0}, kept.size(), [&](size_t si) {
      const State& s = kept[si];
      auto covered = [&](OpId o) { return has(s.covered, o); };
      std::vector<char> tried(lib.candidates().size(), 0);
      for (OpId r = 0; r < n; ++r) {
        if (covered(r)) continue;
        bool ready = true;
        for (TensorId t : p.ops[r].inputs) ready &= p.producer[t] < 0 || covered(p.producer[t]);
        if (!ready) continue;
        for (int ci : lib.withOp(r)) {
          if (tried[ci] || stop()) continue;
          tried[ci] = 1;
          const Candidate& C = lib.candidates()[ci];
          bool ok = true;
          for (OpId o : C.ops) ok &= !covered(o);
          for (TensorId t : C.inputs) ok &= p.producer[t] < 0 || covered(p.producer[t]);
          // Every resident tensor is read here, and by no one else (it was not written).
          for (TensorId t : s.resident) {
            ok &= std::binary_search(C.inputs.begin(), C.inputs.end(), t);
            for (OpId x : p.consumers[t]) ok &= std::find(C.ops.begin(), C.ops.end(), x) != C.ops.end();
          }
          if (!ok) continue;
          std::vector<std::vector<TensorId>> routs = {{}};
          if (!C.retainable.empty()) routs.push_back(C.retainable);
          if (C.retainable.size() >= 2 && C.retainable.size() <= 3)
            for (TensorId t : C.retainable) routs.push_back({t});
          for (auto& rout : routs) {
            CandidateLibrary::Priced pr = lib.price(ci, s.resident, rout, stop);
            if (!pr.valid) continue;
            State ns;
            ns.covered = s.covered;
            for (OpId o : C.ops) ns.covered[static_cast<size_t>(o) >> 6] |= uint64_t{1} << (o & 63);
            ns.count = s.count + static_cast<int>(C.ops.size());
            ns.resident = rout;
            ns.cost = s.cost + pr.latency;
            ns.tail = std::make_shared<const Node>(Node{ci, rout, pr, s.tail});
            next[si].push_back(std::move(ns));
          }
        }
      }
    });
    for (auto& v : next)
      for (State& ns : v) layers[ns.count].push_back(std::move(ns));
  }
  const State* best = nullptr;
  for (const State& s : layers[n])
    if (s.resident.empty() && (!best || s.cost < best->cost)) best = &s;
  if (!best) return false;
  out.subgraphs.clear();
  out.reported.clear();
  for (const Node* x = best->tail.get(); x; x = x->parent.get()) {
    out.subgraphs.push_back(SubgraphSched{lib.candidates()[x->cand].ops, x->price.g, x->price.trav, x->rout});
  }
  std::reverse(out.subgraphs.begin(), out.subgraphs.end());
  latency = best->cost;
  return true;
}

}  // namespace mlsys
