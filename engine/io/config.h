// Search configuration: a plain struct with defaults, loaded strictly from YAML (unknown keys and
// bad values are errors naming the key and line; every error of a load is reported at once),
// overridden by `--set KEY=VALUE` and CLI flags.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "cost/model/model.h"
#include "engine/base/worker_kind.h"

namespace mlsys {

// Every field is a config key: its YAML path, default, accepted values and meaning are declared
// once, in the table of engine/io/config_table.cpp (the README table and configs/default.yaml are
// checked against it). A default-constructed SearchConfig holds the defaults of that table.
struct SearchConfig {
  SearchConfig();
  // search: the run (the flags --seconds, --threads, --seed override these)
  double seconds{};                 // search.seconds: < 0 ("auto"): from the instance size
  int threads{};                    // search.threads: 0: every CPU the process may use
  uint64_t seed{};                  // search.seed
  std::vector<WorkerKind> workers;  // search.workers: assigned to threads round-robin
  double log_interval_s{};          // search.log_interval_s
  double write_interval_s{};        // search.write_interval_s
  double margin_s{};                // search.margin_s
  double exact_share{};             // search.exact_share
  double bound_share{};             // search.bound_share
  long baseline_full_walk_ops{};    // search.baseline_full_walk_ops
  bool exact_full_space{};          // search.exact_full_space
  // sa:
  double sa_t0{};                              // sa.t0
  double sa_t1{};                              // sa.t1
  long sa_scale_ops{};                         // sa.scale_ops
  long sa_restart_after{};                     // sa.restart_after
  long sa_sync_every{};                        // sa.sync_every
  bool sa_adopt_pool_best{};                   // sa.adopt_pool_best
  std::map<std::string, double> move_weights;  // sa.moves: move name -> roulette weight
  // beam:
  int beam_width{};                // beam.width
  int beam_max_segment{};          // beam.max_segment
  double beam_time_share{};        // beam.time_share
  double beam_pace_share{};        // beam.pace_share
  int beam_order_width{};          // beam.order_width
  int beam_library_ops{};          // beam.library_ops
  int beam_order_max_ops{};        // beam.order_max_ops
  double beam_order_time_share{};  // beam.order_time_share
  WorkerKind beam_then{};          // beam.then: Annealing, Lns, or BeamThen for `auto` (search.cpp, beamThen)
  // lns:
  int lns_whole_graph_ops{};           // lns.whole_graph_ops
  int lns_window_ops_min{};            // lns.window_ops_min
  int lns_window_ops_max{};            // lns.window_ops_max
  double lns_window_seconds{};         // lns.window_seconds
  double lns_reader_window_seconds{};  // lns.reader_window_seconds
  long lns_stall_windows{};            // lns.stall_windows
  bool lns_every_side{};               // lns.every_side
  bool lns_adaptive{};                 // lns.adaptive
  double lns_slice_seconds{};          // lns.slice_seconds
  bool lns_polish{};                   // lns.polish
  int lns_region_ops{};                // lns.region_ops
  double lns_guided{};                 // lns.guided
  bool lns_component_regions{};        // lns.component_regions
  // lns.moves: the move weights of the annealing an LNS worker runs (its adaptive slices, or after
  // a proof), over sa.moves: a key given here replaces that move's weight for those annealers only.
  std::map<std::string, double> lns_move_weights;
  // The roulette weights of an annealer in an LNS worker (lns_role) or elsewhere.
  std::map<std::string, double> annealWeights(bool lns_role) const {
    std::map<std::string, double> w = move_weights;
    if (lns_role)
      for (const auto& [k, v] : lns_move_weights) w[k] = v;
    return w;
  }
  // pool:
  int pool_size{};  // pool.size
  // pool.isolate_first: with more than one thread, the first worker reads (adopts, restarts from)
  // only the elites it offered itself, so its trajectory is the 1-thread search's whatever the
  // other threads do; they read every worker's elites, its included. false: every worker reads
  // every worker's elites.
  bool pool_isolate_first{};
  // cache:
  long cache_entries{};  // cache.entries: per worker
  ModelOptions model;    // model.matmul_compute, model.matmul_chains, model.k_limit
};

// Loads `path` ("": none) over the defaults, then applies `overrides` ("KEY=VALUE", as given to
// `--set`: KEY a dotted path such as sa.t0 or sa.moves.merge, VALUE a YAML value such as 0.001 or
// [beam,sa]) in order, each checked exactly like the file. Every error of the file and of the
// overrides is reported in one InputError: one error alone as "config 'x.yaml': line 7: sa.tempX:
// unknown key (known: ...)" or "--set sa.t0=abc: sa.t0: expected a number, got \"abc\""; several
// as "3 errors in the config:" and one such line each, indented. (A file that is not YAML stops at
// its first syntax error.)
// A malformed --set argument (no '='; an empty key) throws ConfigOverrideSyntaxError instead,
// before anything is checked: the caller reports a usage error.
SearchConfig loadConfig(const std::string& path, const std::vector<std::string>& overrides = {});
SearchConfig loadConfigText(const std::string& yaml, const std::string& name = "config");
struct ConfigOverrideSyntaxError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
std::string configToYaml(const SearchConfig& c);

}  // namespace mlsys
