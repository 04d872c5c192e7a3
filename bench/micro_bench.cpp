// Micro-benchmarks of the cost model and the incremental evaluator on the contest instances.
// Build: the mlsys_bench target (<build>/bench/mlsys_bench). Summary table: bench/bench_table.py.
//
// Instances: every *.json in $MLSYS_INSTANCES (default <source>/../shared/benchmarks; absent:
// a message on stderr and exit 0). Each gets a "realistic" schedule: baselineSchedule() improved
// by up to kImproveSteps random moves (all move kinds, fixed seed) applied when valid and not
// worse (plateau moves too, as the annealer does). Deterministic. Benchmarks, per file stem:
//
//   BM_FullEval/<inst>             evaluateSchedule() of the realistic schedule (items = schedules)
//   BM_SubgraphFast/<inst>         costSubgraph(CostMethod::Fast) of its largest subgraph (by steps)
//   BM_SubgraphWalk/<inst>         the same with CostMethod::Walk (the oracle)
//   BM_Delta/<move>/hit/<inst>     IncrementalEvaluator::evaluate() only, over up to kProposals
//                                  distinct proposals of one move kind made beforehand (fixed
//                                  seed); cache warm (every proposal evaluated once first)
//   BM_Delta/<move>/miss/<inst>    the same, the cache emptied before each timed pass over the
//                                  list and re-filled with the current schedule's subgraphs only
//                                  (outside the timer), so the changed subgraphs of every proposal
//                                  miss while the unchanged neighbour hits, as in the search
//   BM_Step/<move>/<inst>          propose() + evaluate() as the search does (the proposal's own
//                                  pricing, e.g. granularity repair, included), same cold cache
//   BM_Delta/<move>/hitfull/<inst> as hit, but the cache first filled to ~3/4 of its capacity by
//                                  a random walk, as in a long search (run last per instance)
//
// Counters: items_per_second everywhere; hit_rate (cache hits / lookups in the timed part),
// misses_per_eval, valid_frac (share of proposals that evaluate valid), proposals (list size),
// cache_entries; steps, ops and fast (1 if priced by step classes) for the subgraph benchmarks;
// latency, baseline_latency and subgraphs for BM_FullEval.
// Times are thread CPU time (Google Benchmark's default), so rates are per thread. The machine
// is noisy: use --benchmark_repetitions=3 and the medians.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cost/pricing/evaluator.h"
#include "cost/pricing/incremental.h"
#include "cost/pricing/subgraph.h"
#include "engine/construct/construct.h"
#include "moves/move.h"

namespace fs = std::filesystem;
using namespace mlsys;

namespace {

constexpr int kImproveSteps = 2000;      // random proposals applied (if valid and better)...
constexpr int kImproveAttempts = 50000;  // ...out of at most this many
constexpr uint64_t kImproveSeed = 20260521;
constexpr size_t kProposals = 2000;       // distinct proposals per move kind
constexpr int kProposeAttempts = 200000;  // cap on propose() calls to find them
constexpr int kStepBatch = 1000;          // propose() calls per timed batch of BM_Step
constexpr size_t kCacheCap = 1 << 16;     // IncrementalEvaluator's default (= SearchConfig::cache_entries)
constexpr int kFillAttempts = 200000;     // cap on proposals used to fill a cache for "hitfull"

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// Everything that identifies a change, for de-duplicating proposals.
std::vector<i64> changeKey(const Change& c) {
  std::vector<i64> k = {c.first, c.count, static_cast<i64>(c.repl.size())};
  for (const auto& sg : c.repl) {
    k.push_back(static_cast<i64>(sg.ops.size()));
    k.insert(k.end(), sg.ops.begin(), sg.ops.end());
    k.insert(k.end(), {sg.gran.w, sg.gran.h, sg.gran.k, static_cast<i64>(sg.trav.kind)});
    k.push_back(static_cast<i64>(sg.trav.order.size()));
    k.insert(k.end(), sg.trav.order.begin(), sg.trav.order.end());
    k.push_back(static_cast<i64>(sg.retain.size()));
    k.insert(k.end(), sg.retain.begin(), sg.retain.end());
  }
  return k;
}

struct Proposals {
  std::vector<Change> list;
  double valid_frac = 0;
};

// One instance: the problem, its realistic schedule and (lazily) per-move proposal lists.
struct Instance {
  std::string name, path;
  bool ready = false;
  std::string error;
  Problem p;
  ModelOptions m;
  Schedule sched;
  double baseline_total = 0, total = 0;
  int largest = -1;  // index of the subgraph with the most steps
  std::map<std::string, Proposals> proposals;
  std::unique_ptr<IncrementalEvaluator> filled;  // at the schedule, cache filled by random proposals

  // Loads and builds the schedule on first use (not timed). False (with `error`) on failure.
  bool prepare() {
    if (ready) return true;
    if (!error.empty()) return false;
    try {
      p = parseProblemFile(path);
      Schedule base = baselineSchedule(p, m);
      IncrementalEvaluator ev(p, m);
      ev.reset(base);
      baseline_total = ev.total();
      std::vector<std::unique_ptr<Move>> moves;
      for (const auto& n : moveNames())
        if (auto mv = makeMove(n); mv && mv->supports(p)) moves.push_back(std::move(mv));
      Rng rng(kImproveSeed);
      for (int i = 0, applied = 0; i < kImproveAttempts && applied < kImproveSteps && !moves.empty(); ++i) {
        Move& mv = *moves[randBelow(rng, moves.size())];
        Change c;
        if (!mv.propose(ev, rng, c)) continue;
        DeltaEval d = ev.evaluate(c);
        if (d.valid && d.delta <= 1e-12 * std::max(1.0, ev.total())) {  // plateau moves too, as the SA does
          ev.apply(c, d);
          ++applied;
        }
      }
      sched = ev.schedule();
      Evaluation full = evaluateSchedule(p, sched, m);
      if (!full.valid) {  // cannot happen if the incremental evaluator is right; keep going
        std::cerr << "mlsys_bench: " << name << ": improved schedule invalid (" << full.rule
                  << "), using the baseline\n";
        sched = base;
        full = evaluateSchedule(p, sched, m);
      }
      total = full.total;
      i64 best = -1;
      for (size_t i = 0; i < full.subgraphs.size(); ++i)
        if (full.subgraphs[i].cost.steps > best) {
          best = full.subgraphs[i].cost.steps;
          largest = static_cast<int>(i);
        }
      ready = true;
    } catch (const std::exception& e) {
      error = name + ": " + e.what();
    }
    return ready;
  }

  const std::vector<TensorId>& retainedInto(int i) const {
    static const std::vector<TensorId> none;
    return i > 0 ? sched.subgraphs[i - 1].retain : none;
  }

  // Distinct proposals of one move kind from the realistic schedule, fixed seed.
  const Proposals& proposalsFor(const std::string& move) {
    auto it = proposals.find(move);
    if (it != proposals.end()) return it->second;
    Proposals& out = proposals[move];
    auto mv = makeMove(move);
    if (!mv || !mv->supports(p)) return out;
    IncrementalEvaluator ev(p, m);
    ev.reset(sched);
    Rng rng(kImproveSeed ^ fnv1a(move));
    std::set<std::vector<i64>> seen;
    int since_new = 0;
    for (int a = 0; a < kProposeAttempts && out.list.size() < kProposals && since_new < 20000; ++a) {
      Change c;
      ++since_new;
      if (!mv->propose(ev, rng, c)) continue;
      if (!seen.insert(changeKey(c)).second) continue;
      since_new = 0;
      out.list.push_back(std::move(c));
    }
    size_t valid = 0;
    for (const auto& c : out.list) valid += ev.evaluate(c).valid;
    out.valid_frac = out.list.empty() ? 0 : static_cast<double>(valid) / static_cast<double>(out.list.size());
    return out;
  }

  // An evaluator at the schedule whose cache holds about 3/4 of its capacity (both generations
  // in use, as in a long search), filled by evaluating random proposals of every move kind.
  // (Instances with few distinct neighbours fill less: see the cache_entries counter.)
  const IncrementalEvaluator& filledEvaluator() {
    if (filled) return *filled;
    filled = std::make_unique<IncrementalEvaluator>(p, m, kCacheCap);
    filled->reset(sched);
    std::vector<std::unique_ptr<Move>> moves;
    for (const auto& n : moveNames())
      if (auto mv = makeMove(n); mv && mv->supports(p)) moves.push_back(std::move(mv));
    // A random walk (valid moves up to 1% worse are applied) so that the entries keep changing,
    // then back to the schedule: reset() keeps the cache.
    Rng rng(kImproveSeed ^ 0xf111f111ULL);
    for (int a = 0; a < kFillAttempts && !moves.empty() && filled->cache().size() < kCacheCap * 3 / 4; ++a) {
      Change c;
      if (!moves[randBelow(rng, moves.size())]->propose(*filled, rng, c)) continue;
      DeltaEval d = filled->evaluate(c);
      if (d.valid && d.delta <= 0.01 * filled->total()) filled->apply(c, d);
    }
    filled->reset(sched);
    return *filled;
  }

  // Empties the cache, then prices the current schedule's subgraphs (as the search's cache
  // always holds them): the state in which a new proposal is "uncached".
  void coldCache(IncrementalEvaluator& ev) const {
    ev.cache().clear();
    for (int i = 0; i < static_cast<int>(sched.subgraphs.size()); ++i) ev.cost(sched.subgraphs[i], retainedInto(i));
  }
};

// The instance whose benchmarks run now. A filled cache left alive (or its freed memory) slows the
// allocation-heavy miss path of later benchmarks, so it is dropped when the next instance starts,
// and the hitfull benchmarks run last within their instance.
Instance* g_current = nullptr;

bool ready(benchmark::State& st, Instance& in) {
  if (g_current != &in) {
    if (g_current) g_current->filled.reset();
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    g_current = &in;
  }
  if (in.prepare()) return true;
  st.SkipWithError(in.error.c_str());
  return false;
}

void setCacheCounters(benchmark::State& st, uint64_t hits, uint64_t misses, double evals) {
  const double look = static_cast<double>(hits + misses);
  st.counters["hit_rate"] = look > 0 ? static_cast<double>(hits) / look : 0;
  st.counters["misses_per_eval"] = evals > 0 ? static_cast<double>(misses) / evals : 0;
}

void BM_FullEval(benchmark::State& st, Instance* in) {
  if (!ready(st, *in)) return;
  for (auto _ : st) {
    Evaluation e = evaluateSchedule(in->p, in->sched, in->m);
    benchmark::DoNotOptimize(e.total);
  }
  st.SetItemsProcessed(st.iterations());
  st.counters["subgraphs"] = static_cast<double>(in->sched.subgraphs.size());
  st.counters["latency"] = in->total;
  st.counters["baseline_latency"] = in->baseline_total;
}

void BM_Subgraph(benchmark::State& st, Instance* in, CostMethod method) {
  if (!ready(st, *in)) return;
  const SubgraphSched& sg = in->sched.subgraphs[static_cast<size_t>(in->largest)];
  SubgraphPlan plan = planSubgraph(in->p, in->m, sg.ops, sg.gran, in->retainedInto(in->largest), sg.retain);
  SubgraphCost c0 = costSubgraph(in->p, plan, sg.trav, method);
  for (auto _ : st) {
    SubgraphCost c = costSubgraph(in->p, plan, sg.trav, method);
    benchmark::DoNotOptimize(c.num);
  }
  st.SetItemsProcessed(st.iterations());
  st.counters["steps"] = static_cast<double>(c0.steps);
  st.counters["fast"] = c0.fast ? 1 : 0;
  st.counters["ops"] = static_cast<double>(sg.ops.size());
}

void BM_DeltaHit(benchmark::State& st, Instance* in, std::string move, bool full) {
  if (!ready(st, *in)) return;
  const Proposals& pr = in->proposalsFor(move);
  if (pr.list.empty()) {
    st.SkipWithError("no proposals for this move kind");
    return;
  }
  std::unique_ptr<IncrementalEvaluator> evp;
  if (full) {
    evp = std::make_unique<IncrementalEvaluator>(in->filledEvaluator());  // a copy: benchmarks stay independent
  } else {
    evp = std::make_unique<IncrementalEvaluator>(in->p, in->m, kCacheCap);
    evp->reset(in->sched);
  }
  IncrementalEvaluator& ev = *evp;
  for (const auto& c : pr.list) ev.evaluate(c);  // warm
  const uint64_t h0 = ev.cache().hits, m0 = ev.cache().misses;
  size_t i = 0;
  const size_t n = pr.list.size();
  for (auto _ : st) {
    DeltaEval d = ev.evaluate(pr.list[i]);
    benchmark::DoNotOptimize(d.total);
    if (++i == n) i = 0;
  }
  st.SetItemsProcessed(st.iterations());
  setCacheCounters(st, ev.cache().hits - h0, ev.cache().misses - m0, static_cast<double>(st.iterations()));
  st.counters["valid_frac"] = pr.valid_frac;
  st.counters["proposals"] = static_cast<double>(n);
  st.counters["cache_entries"] = static_cast<double>(ev.cache().size());
}

void BM_DeltaMiss(benchmark::State& st, Instance* in, std::string move) {
  if (!ready(st, *in)) return;
  const Proposals& pr = in->proposalsFor(move);
  if (pr.list.empty()) {
    st.SkipWithError("no proposals for this move kind");
    return;
  }
  IncrementalEvaluator ev(in->p, in->m, kCacheCap);
  ev.reset(in->sched);
  uint64_t hits = 0, misses = 0;
  for (auto _ : st) {
    st.PauseTiming();  // once per batch of proposals: its overhead is negligible
    in->coldCache(ev);
    const uint64_t h0 = ev.cache().hits, m0 = ev.cache().misses;
    st.ResumeTiming();
    for (const auto& c : pr.list) {
      DeltaEval d = ev.evaluate(c);
      benchmark::DoNotOptimize(d.total);
    }
    hits += ev.cache().hits - h0;
    misses += ev.cache().misses - m0;
  }
  const double evals = static_cast<double>(st.iterations()) * static_cast<double>(pr.list.size());
  st.SetItemsProcessed(static_cast<int64_t>(evals));
  setCacheCounters(st, hits, misses, evals);
  st.counters["valid_frac"] = pr.valid_frac;
  st.counters["proposals"] = static_cast<double>(pr.list.size());
}

void BM_Step(benchmark::State& st, Instance* in, std::string move) {
  if (!ready(st, *in)) return;
  auto mv = makeMove(move);
  if (!mv || !mv->supports(in->p)) {
    st.SkipWithError("move not supported");
    return;
  }
  IncrementalEvaluator ev(in->p, in->m, kCacheCap);
  ev.reset(in->sched);
  Rng rng(kImproveSeed ^ fnv1a(move) ^ 0x5bd1e995ULL);
  uint64_t hits = 0, misses = 0;
  int64_t evaluated = 0, valid = 0;
  for (auto _ : st) {
    st.PauseTiming();
    in->coldCache(ev);
    const uint64_t h0 = ev.cache().hits, m0 = ev.cache().misses;
    st.ResumeTiming();
    for (int a = 0; a < kStepBatch; ++a) {
      Change c;
      if (!mv->propose(ev, rng, c)) continue;
      DeltaEval d = ev.evaluate(c);
      benchmark::DoNotOptimize(d.total);
      ++evaluated;
      valid += d.valid;
    }
    hits += ev.cache().hits - h0;
    misses += ev.cache().misses - m0;
  }
  if (evaluated == 0) {
    st.SkipWithError("no proposal of this move kind applies to the schedule");
    return;
  }
  st.SetItemsProcessed(evaluated);
  setCacheCounters(st, hits, misses, static_cast<double>(evaluated));
  st.counters["valid_frac"] = evaluated ? static_cast<double>(valid) / static_cast<double>(evaluated) : 0;
  st.counters["propose_success"] = static_cast<double>(evaluated) / (static_cast<double>(st.iterations()) * kStepBatch);
}

// "mlsys-2026-10" after "mlsys-2026-9": compare digit runs by value.
bool naturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      std::string x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

fs::path instanceDir() {
  if (const char* e = std::getenv("MLSYS_INSTANCES"); e && *e) return fs::path(e);
  return (fs::path(MLSYS_SOURCE_DIR) / ".." / "shared" / "benchmarks").lexically_normal();
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  const fs::path dir = instanceDir();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    std::cerr << "mlsys_bench: instance folder " << dir.string()
              << " not found (set MLSYS_INSTANCES); skipping all benchmarks\n";
    return 0;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  if (files.empty()) {
    std::cerr << "mlsys_bench: no *.json instance in " << dir.string() << "; skipping all benchmarks\n";
    return 0;
  }
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return naturalLess(a.stem().string(), b.stem().string()); });

  // Instances live until exit; each is loaded on the first benchmark that needs it, so a
  // --benchmark_filter on one instance loads only that one.
  static std::vector<std::unique_ptr<Instance>> instances;
  for (const auto& f : files) {
    auto in = std::make_unique<Instance>();
    in->name = f.stem().string();
    in->path = f.string();
    Instance* ip = in.get();
    instances.push_back(std::move(in));
    const std::string& nm = ip->name;
    benchmark::RegisterBenchmark(("BM_FullEval/" + nm).c_str(), BM_FullEval, ip)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_SubgraphFast/" + nm).c_str(), BM_Subgraph, ip, CostMethod::Fast)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_SubgraphWalk/" + nm).c_str(), BM_Subgraph, ip, CostMethod::Walk)
        ->Unit(benchmark::kMicrosecond);
    for (const auto& mv : moveNames()) {
      benchmark::RegisterBenchmark(("BM_Delta/" + mv + "/hit/" + nm).c_str(), BM_DeltaHit, ip, mv, false)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("BM_Delta/" + mv + "/miss/" + nm).c_str(), BM_DeltaMiss, ip, mv)
          ->Unit(benchmark::kMillisecond);
    }
    for (const auto& mv : moveNames())
      benchmark::RegisterBenchmark(("BM_Step/" + mv + "/" + nm).c_str(), BM_Step, ip, mv)
          ->Unit(benchmark::kMillisecond);
    for (const auto& mv : moveNames())
      benchmark::RegisterBenchmark(("BM_Delta/" + mv + "/hitfull/" + nm).c_str(), BM_DeltaHit, ip, mv, true)
          ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
