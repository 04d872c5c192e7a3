// The kinds of search worker (`search.workers` in the config, assigned to threads round-robin).
// Each kind has its own file; engine/search/search.cpp runs a worker by its kind.
#pragma once
#include <optional>
#include <string_view>

namespace mlsys {

enum class WorkerKind {
  // engine/search/beam.cpp: the constructors and beam passes build starting schedules; then the
  // worker runs `beam.then` (Annealing or Lns) from the best of them for the rest of the run, so
  // most of its time goes to that (its config name stays "beam", which users' files use).
  BeamThen,
  Annealing,  // engine/search/annealing.cpp: simulated annealing over the moves of moves/
  Lns,        // engine/search/lns.cpp: exact re-optimisation of windows (the whole graph when small)
};
inline constexpr WorkerKind kWorkerKinds[] = {WorkerKind::BeamThen, WorkerKind::Annealing, WorkerKind::Lns};

// The name in configs, logs and traces: "beam", "sa", "lns".
inline const char* workerKindName(WorkerKind k) {
  switch (k) {
    case WorkerKind::BeamThen: return "beam";
    case WorkerKind::Annealing: return "sa";
    case WorkerKind::Lns: return "lns";
  }
  return "?";
}

inline std::optional<WorkerKind> parseWorkerKind(std::string_view name) {
  for (WorkerKind k : kWorkerKinds)
    if (name == workerKindName(k)) return k;
  return std::nullopt;
}

}  // namespace mlsys
