// Search configuration: plain structs with defaults, loaded strictly from YAML (unknown keys and
// bad values are errors naming the key and line), overridden by `--set KEY=VALUE` and CLI flags.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "cost/model.h"
#include "engine/base/worker_kind.h"

namespace mlsys {

struct SearchConfig {
  // search: the run (the flags --seconds, --threads, --seed override these)
  double seconds = -1;  // wall-clock budget; < 0 ("auto"): from the instance size, inside the contest limit
  int threads = 0;      // worker threads; 0: every CPU the process may use
  uint64_t seed = 1;    // random seed
  std::vector<WorkerKind> workers = {WorkerKind::Beam, WorkerKind::Lns};  // assigned to threads round-robin
  double log_interval_s = 2.0;    // progress line period on stderr
  double write_interval_s = 0.1;  // at most one output write per interval (<= 10 writes/s)
  double margin_s = 0.15;         // stop searching this long before the deadline
  double exact_share = 0.5;       // --exact: the share of the budget left the exact solver may take before the search
  // sa:
  double sa_t0 = 0.002;            // start temperature, as a fraction of the current latency
  double sa_t1 = 0.00001;          // end temperature (same unit)
  long sa_restart_after = 20000;   // evaluations without improvement before a restart from the pool
  long sa_sync_every = 2000;       // evaluations between offers to the pool
  std::map<std::string, double> move_weights = {
      {"merge", 3}, {"fuse", 0}, {"split", 1}, {"move-op", 2}, {"recompute", 1}, {"uncompute", 1},
      {"granularity", 4}, {"traversal", 1}, {"retain", 2}, {"reorder", 0.5}};
  // beam:
  int beam_width = 4;           // partial schedules kept per position
  int beam_max_segment = 8;     // ops per subgraph considered by the beam
  double beam_time_share = 0.35;  // no further beam pass after this fraction of the budget
  int beam_order_width = 8;        // order-aware beam over the candidate library: states kept per layer (0: off)
  int beam_library_ops = 4;        // largest candidate (ops) in the library
  int beam_order_max_ops = 300;    // graphs with more ops skip the order-aware beam
  double beam_order_time_share = 0.1;  // no order-aware beam pass past this fraction of the budget (once a schedule exists)
  WorkerKind beam_then = WorkerKind::Annealing;  // what a beam worker turns into after its passes (sa or lns)
  // lns:
  int lns_whole_graph_ops = 14;     // graphs up to this many ops: the exact solver on the whole graph first
  int lns_window_ops_min = 3;       // window size (distinct ops) at the start and after a round
  int lns_window_ops_max = 12;      // largest window (at most 20)
  double lns_window_seconds = 1.0;  // time limit of one window's exact solve
  long lns_stall_windows = 30;      // windows without improvement before the size grows
  bool lns_every_side = false;      // windows over every tile side, not only the smallest per tile count
  bool sa_adopt_pool_best = true;   // an annealer behind the pool's best continues from it (at its sync points)
  bool lns_adaptive = true;         // an LNS worker alternates time slices of windows and annealing by their yield
  double lns_slice_seconds = 0.5;   // length of one such slice
  bool lns_polish = true;           // the adaptive LNS worker's third kind of slice: the granularity polish
  // Move weights of the annealing an LNS worker runs (its adaptive slices, or after a proof),
  // over sa.moves: a key given here replaces that move's weight for those annealers only.
  std::map<std::string, double> lns_move_weights = {{"fuse", 1}};
  // The roulette weights of an annealer in an LNS worker (lns_role) or elsewhere.
  std::map<std::string, double> annealWeights(bool lns_role) const {
    std::map<std::string, double> w = move_weights;
    if (lns_role)
      for (const auto& [k, v] : lns_move_weights) w[k] = v;
    return w;
  }
  // pool:
  int pool_size = 8;
  // With more than one thread, the first worker reads (adopts, restarts from) only the elites it
  // offered itself, so its trajectory is the 1-thread search's whatever the other threads do; they
  // read every worker's elites, its included. false: every worker reads every worker's elites.
  bool pool_isolate_first = true;
  // cache:
  long cache_entries = 1 << 16;  // per worker
  ModelOptions model;
};

// Loads `path` ("": none) over the defaults, then applies `overrides` ("KEY=VALUE", as given to
// `--set`: KEY a dotted path such as sa.t0 or sa.moves.merge, VALUE a YAML value such as 0.001 or
// [beam,sa]) in order, each checked exactly like the file. Throws InputError("config 'x.yaml':
// line 7: sa.tempX: unknown key (known: ...)"), InputError("--set sa.t0=abc: sa.t0: expected a
// number, got \"abc\"").
// A malformed --set argument (no '='; an empty key) throws ConfigOverrideSyntaxError instead: the
// caller reports a usage error.
SearchConfig loadConfig(const std::string& path, const std::vector<std::string>& overrides = {});
SearchConfig loadConfigText(const std::string& yaml, const std::string& name = "config");
struct ConfigOverrideSyntaxError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
std::string configToYaml(const SearchConfig& c);

}  // namespace mlsys
