// The search: beam-search construction and simulated-annealing workers (oneTBB tasks), sharing
// an elite pool and the output writer, under one wall-clock deadline.
#pragma once
#include <functional>
#include <map>

#include "cost/incremental.h"
#include "engine/config.h"
#include "engine/output.h"
#include "engine/solver.h"

namespace mlsys {

struct MoveStats {
  long evaluations = 0, valid = 0, applied = 0, improvements = 0;
};

struct SearchResult {
  long evaluations = 0;
  double best_found_s = 0;  // when the final best was found
  std::map<std::string, MoveStats> moves;
  std::map<std::string, double> best_by_kind;  // worker kind -> best latency it reached
};

SearchResult runSearch(const Problem& p, const SolveOptions& opt, const SearchConfig& cfg, Deadline& deadline,
                       OutputWriter& out, const Schedule& start);

// Beam search over contiguous segments of a topological order (see search.cpp). Deterministic.
// Returns false if it was interrupted by the deadline before completing.
bool beamConstruct(const Problem& p, const SearchConfig& cfg, const std::vector<OpId>& order,
                   const std::function<bool()>& stop, IncrementalEvaluator& ev, Schedule& out, double& latency);

// A topological order that keeps producer->consumer chains together (DFS-like).
std::vector<OpId> chainTopoOrder(const Problem& p);

}  // namespace mlsys
