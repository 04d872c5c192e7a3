// Limits and tolerances shared by the engine's rooms.
#pragma once

namespace mlsys {

// The most ops the exact solver attempts in one problem (a whole graph, an LNS window): its
// states are bitmasks of 64 bits, and far below that the search no longer ends in useful time.
// The exact solver's default (ExactOptions::max_ops), the LNS windows, the config's ranges
// (lns.whole_graph_ops, lns.window_ops_*) and the messages of solve() use it.
inline constexpr int kExactMaxOps = 20;

// "x improves on ref": below it by more than the relative tolerance (1e-9 by default: sums of
// per-subgraph latencies differ in their last bits by the order they were added in; the polish
// steps use 1e-12, to take every gain larger than rounding).
inline constexpr double kImproveTol = 1e-9;
inline bool improves(double x, double ref, double tol = kImproveTol) { return x < ref - tol * ref; }
// "x is worse than ref": above it by more than the same tolerance.
inline bool worsens(double x, double ref, double tol = kImproveTol) { return x > ref + tol * ref; }
// The same for a change's latency delta against the total `ref` it applies to.
inline bool deltaImproves(double delta, double ref, double tol = kImproveTol) { return delta < -tol * ref; }
inline bool deltaWorsens(double delta, double ref, double tol = kImproveTol) { return delta > tol * ref; }

}  // namespace mlsys
