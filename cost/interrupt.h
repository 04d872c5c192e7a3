// A process-wide request to abandon long computations, set from a signal handler (SIGTERM, SIGINT,
// SIGHUP): the full evaluator and IncrementalEvaluator::reset check it every few subgraphs and give
// up, so that a run on a 200,000-op graph exits within milliseconds of the signal.
#pragma once
#include <atomic>

namespace mlsys {

inline std::atomic<bool> g_interrupt{false};
inline bool interrupted() { return g_interrupt.load(std::memory_order_relaxed); }

}  // namespace mlsys
