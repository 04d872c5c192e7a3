// The keys of the search config: the one place each is declared, with its field, default,
// accepted values and help text. A new key is one entry here and a field in SearchConfig
// (engine/io/config.h); then configs/default.yaml and the README table, which
// tests/io/config_keys_test.cpp checks against this table.
#include "cost/model/model.h"
#include "engine/base/limits.h"
#include "engine/io/config.h"
#include "engine/io/config_kinds.h"

namespace mlsys {
namespace {

using namespace config_kinds;
using C = SearchConfig;

std::vector<ConfigKey> searchKeys() {
  return {
      realOrAuto("search.seconds", &C::seconds, "auto", 0.001, 1e9,
                 "the budget of `-s, --seconds`; `auto`: from the instance size, inside the contest limit"),
      integer("search.threads", &C::threads, "0", 0, 1000000,
              "worker threads, as `-t, --threads` (0 = every CPU the process may use)"),
      integer("search.seed", &C::seed, "1", 0, UINT64_MAX, "random seed, as `--seed`"),
      workers(
          "search.workers", &C::workers, "[beam, lns]",
          "the portfolio: worker kinds assigned to threads round-robin (thread i runs `workers[i mod n]`); with one "
          "thread only the first runs"),
      real("search.log_interval_s", &C::log_interval_s, "2", 0.01, 3600, "progress line period (stderr)"),
      real("search.write_interval_s", &C::write_interval_s, "0.1", 0, 60, "at most one output write per interval"),
      real(
          "search.margin_s", &C::margin_s, "0.15", 0, 60,
          "stop searching at least this long before the deadline (more when the writer's measured evaluation and write "
          "times need it); at or above the budget it is halved to half the budget, with a warning"),
      real("search.bound_share", &C::bound_share, "0.25", 0, 1,
           "the share of the budget the lower bound may take, running beside the search from the first schedule on "
           "(an anytime task: each value it proves is published at once), in CPU time of its thread and at most "
           "twice that in wall-clock time; 0: no bound but the global floors"),
      integer("search.baseline_full_walk_ops", &C::baseline_full_walk_ops, "1000", 0, 1000000000,
              "the baseline prices every granularity candidate of each op on graphs of at most this many ops; on "
              "larger ones it descends through the same candidates from the largest fitting one (a local optimum, "
              "dozens of pricings instead of thousands: the baseline of 5,000 ops in well under a second)"),
      real("search.exact_share", &C::exact_share, "0.5", 0.01, 1,
           "with `--exact`: the share of the budget left after the baseline that the exact solver may take; the search "
           "gets the rest"),
      boolean("search.exact_full_space", &C::exact_full_space, "true",
              "`--exact` and the LNS whole-graph solve search the spec's whole space (every tile side, every order: "
              "a certificate whose lower bound raises the run's bound) instead of the smallest side per tile count "
              "and the listed orders"),
  };
}

std::vector<ConfigKey> annealingKeys() {
  return {
      real("sa.t0", &C::sa_t0, "0.002", 0, 1,
           "start temperature, as a fraction of the current latency; geometric cooling to `sa.t1` over the budget (or "
           "over `--max-evals`)"),
      real("sa.t1", &C::sa_t1, "0.00001", 0, 1, "end temperature (the unit of `sa.t0`)"),
      integer("sa.scale_ops", &C::sa_scale_ops, "200", 0, 1000000000,
              "on a graph of more than N ops both temperatures are scaled by N / ops: a move changes a few "
              "subgraphs, so its delta follows the latency per op, not the whole latency (0: off, the whole "
              "latency at any size)"),
      integer("sa.restart_after", &C::sa_restart_after, "20000", 1, 1000000000000,
              "evaluations without improvement before a restart drawn from the elite pool"),
      integer("sa.sync_every", &C::sa_sync_every, "2000", 1, 1000000000000,
              "evaluations between offers of a worker's best to the pool, with up to 3 threads; with T > 3, "
              "T / 2 times as many (each sync copies the schedule, and each adoption re-prices it and drops the "
              "worker's own moves since)"),
      boolean("sa.adopt_pool_best", &C::sa_adopt_pool_best, "true",
              "at each of those points an annealer whose best is behind the pool's best continues from the pool's best "
              "(several annealers then follow the leader); `false`: annealers meet only at restarts"),
      weights(
          "sa.moves", &C::move_weights,
          "{merge: 3, fuse: 0, fuse-far: 1, split: 1, move-op: 2, recompute: 1, uncompute: 1, granularity: 4, traversal: 1, retain: 2, "
          "reorder: 0.5, reproduce: 1}",
          "roulette weight per move kind (0 disables it; not all 0); when no enabled move applies to the schedule "
          "(20,000 failed proposals in a row) the run says `warning: no enabled move applies to this schedule "
          "(enabled: ...)` and the annealing workers stop"),
  };
}

std::vector<ConfigKey> beamKeys() {
  return {
      integer("beam.width", &C::beam_width, "4", 1, 1024, "partial schedules kept per prefix length"),
      integer("beam.max_segment", &C::beam_max_segment, "8", 1, 64, "most ops per subgraph the beam considers"),
      real("beam.time_share", &C::beam_time_share, "0.35", 0, 1,
           "no further beam pass (another topological order) after this fraction of the budget"),
      real(
          "beam.pace_share", &C::beam_pace_share, "0.75", 0, 1,
          "once a schedule exists, a beam pass aims to end by this fraction of the budget: where its pace says it "
          "would not, it tries shorter segments for the rest of the order (the longest segment shrinking with the overrun, at most halving at a time, down to 1 op); "
          "0: never (a pass on thousands of ops can then take a short budget whole); not under `--max-evals`"),
      integer(
          "beam.order_width", &C::beam_order_width, "8", 0, 4096,
          "the order-aware beam (below): states kept per layer in its first pass; the width doubles each pass while "
          "`beam.order_time_share` lasts (0 turns it off)"),
      integer("beam.library_ops", &C::beam_library_ops, "4", 1, 8, "largest candidate of the library, in ops"),
      integer("beam.order_max_ops", &C::beam_order_max_ops, "300", 0, 1000000,
              "graphs with more ops skip the order-aware beam"),
      real("beam.order_time_share", &C::beam_order_time_share, "0.1", 0, 1,
           "once any schedule exists, no order-aware beam pass runs past this fraction of the budget (a pass cut short "
           "gives nothing), and a wider pass starts only if it should end within it"),
      choice("beam.then", &C::beam_then, "auto",
             {{"auto", WorkerKind::BeamThen}, {"sa", WorkerKind::Annealing}, {"lns", WorkerKind::Lns}},
             "what a beam worker runs after its passes: `sa` (anneal), `lns` (the LNS worker's portfolio), or "
             "`auto`: `lns` unless the budget is `--max-evals` (which stays reproducible with `sa`), then `sa`"),
  };
}

std::vector<ConfigKey> lnsKeys() {
  return {
      integer(
          "lns.whole_graph_ops", &C::lns_whole_graph_ops, "14", 0, kExactMaxOps,
          "an LNS worker on a graph of at most this many ops first runs the exact solver on the whole graph, for the "
          "whole budget if needed; over the spec's whole space (`search.exact_full_space`) its lower bound raises the "
          "run's bound, and a proof ends the run; otherwise the worker anneals for the rest"),
      integer("lns.window_ops_min", &C::lns_window_ops_min, "3", 2, kExactMaxOps,
              "window size in distinct ops at the start of a round (at most `lns.window_ops_max`)"),
      integer(
          "lns.window_ops_max", &C::lns_window_ops_max, "12", 2, kExactMaxOps,
          "largest window: the size grows by one op after `lns.stall_windows` windows without improvement, up to this"),
      real("lns.window_seconds", &C::lns_window_seconds, "1", 0.001, 3600,
           "time limit of one window's exact solve (its best so far is used)"),
      real("lns.reader_window_seconds", &C::lns_reader_window_seconds, "4", 0, 3600,
           "reader windows, each solved within this time limit (at most a tenth of the budget, at least "
           "`lns.window_seconds`): from the subgraph farthest above its part floor (as `lns.guided`), the largest "
           "tensor it loads that another op reads too, the subgraph that made it and those that first run its other "
           "readers (the maker may then share a subgraph with the other readers and retain the tensor into the "
           "first: a CNN's bottleneck block). With `lns.adaptive` a kind of slice of their own, chosen by its yield "
           "like the others; without, a third of the windows where one fits. 0: none. At 4 against 0 (2 threads, "
           "3 seeds): decoder-s512 -0.87%, encoder-s128 -0.32%, resnet50 -0.25%, vit_b_16 -0.14%, random and "
           "gemm-chain graphs within 0.12% either way (bench/RESULTS.md)"),
      integer("lns.stall_windows", &C::lns_stall_windows, "30", 1, 1000000000,
              "windows without improvement before the window grows"),
      boolean("lns.every_side", &C::lns_every_side, "false",
              "windows over every tile side, not only the smallest side per tile count (much slower)"),
      boolean(
          "lns.adaptive", &C::lns_adaptive, "true",
          "an LNS worker spends its time in slices of `lns.slice_seconds`, each windows, annealing, the granularity "
          "polish, a fusion component or reader windows (see *Large-neighbourhood search* below), choosing by the "
          "yield (relative improvement per second) each kind had in its recent slices; `false`: windows only"),
      real("lns.slice_seconds", &C::lns_slice_seconds, "0.5", 0.001, 3600, "length of one such slice"),
      boolean("lns.polish", &C::lns_polish, "true",
              "the adaptive LNS worker's third kind of slice, the granularity polish (below); `false`: windows and "
              "annealing only"),
      integer("lns.region_ops", &C::lns_region_ops, "0", 0, 1000000,
              "decomposition, off by default (0): on a graph of at least 8 times this many ops, the adaptive LNS "
              "worker's fourth kind of slice, a run of consecutive subgraphs holding about this many ops annealed as a "
              "problem of its own and spliced back if cheaper, into the pool's best when another worker improved "
              "elsewhere meanwhile. Measured at 400 on 5,000-op graphs it was neutral (1 thread: -0.05% geomean, "
              "random graphs -0.3%; 2 threads: +0.06%): bench/RESULTS.md"),
      boolean("lns.component_regions", &C::lns_component_regions, "true",
              "decomposition by fusion components (ops that can share a subgraph), on graphs of at least 200 ops: "
              "once the run's bound has ended, the adaptive LNS worker's fourth kind of slice re-optimises one whole "
              "component of 2 to 500 ops by LNS windows as a problem of its own, drawn with weight its latency above "
              "the bound's value for it (quartered for each of its slices that did not gain since one did), and "
              "splices it back among the other subgraphs of its range in an order their tensors allow; LNS windows "
              "whose subgraphs lie apart go back that way too. A slice finding no such component runs "
              "lns.region_ops's region, if that is on. `false`: as before (bench/RESULTS.md, tenth session)"),
      real("lns.guided", &C::lns_guided, "0", 0, 1,
           "the share of LNS windows grown from the subgraph that pays most above its part floor (the bound's "
           "floor of its op set), among those not yet tried at the current window size; the others grow from a "
           "random subgraph. Off by default: at 0.5 (2 threads, 30 s) it measured -0.6% on gemm-chain-n5000, within "
           "0.05% on the other 5,000-op graphs, but +0.3% and +0.8% on gemm-chain-n1000 and transformer-n1000, "
           "where the subgraphs far above their floors are mostly the bound's slack (bench/RESULTS.md)"),
      weights("lns.moves", &C::lns_move_weights, "{fuse: 1, fuse-far: 2}",
              "move weights of the annealing an LNS worker does (its annealing slices, or after proving a small graph "
              "optimal), replacing the weight `sa.moves` gives that move; other annealers (a beam worker's, an `sa` "
              "worker) keep `sa.moves`. A second thread of the default portfolio is an LNS worker, so this is how the "
              "portfolio gives its threads different neighbourhoods: by default the fuse move runs in the LNS worker's "
              "annealing only (`lns.moves.fuse=0` turns it off there), and fuse-far at twice its weight elsewhere"),
  };
}

std::vector<ConfigKey> otherKeys() {
  return {
      integer("pool.size", &C::pool_size, "8", 1, 1024, "elite schedules kept"),
      boolean(
          "pool.isolate_first", &C::pool_isolate_first, "true",
          "with 2 or more threads, the first worker (thread 0) adopts and restarts only from the schedules it found "
          "itself: it runs the 1-thread search whatever the other threads do, while they adopt its schedules as well "
          "as each other's (the written schedule is the best of all). `false`: every worker reads every worker's "
          "elites (a thread can then be pulled into another's worse basin)"),
      integer("cache.entries", &C::cache_entries, "65536", 1024, 100000000, "memoised subgraph costs per worker"),
      // model.matmul_compute, model.matmul_chains, model.k_limit: names from ModelOptions::kOptions.
      modelOption(0, "see Model options"),
      modelOption(1, "see Model options"),
      modelOption(2, "see Model options"),
  };
}

}  // namespace

const std::vector<ConfigKey>& configKeys() {
  static const std::vector<ConfigKey> keys = [] {
    std::vector<ConfigKey> all;
    for (auto part : {searchKeys, annealingKeys, beamKeys, lnsKeys, otherKeys})
      for (ConfigKey& k : part()) all.push_back(std::move(k));
    return all;
  }();
  return keys;
}

}  // namespace mlsys
