// Limits and tolerances shared by the engine's rooms.
#pragma once

namespace mlsys {

// The most ops the exact solver attempts in one problem (a whole graph, an LNS window): its
// states are bitmasks of 64 bits, and far below that the search no longer ends in useful time.
// The exact solver's default (ExactOptions::max_ops), the LNS windows, the config's ranges
// (lns.whole_graph_ops, lns.window_ops_*) and the messages of solve() use it.
inline constexpr int kExactMaxOps = 20;

// "x improves on ref": below it by more than the relative tolerance 1e-9 (sums of per-subgraph
// latencies differ in their last bits by the order they were added in).
inline bool improves(double x, double ref) { return x < ref - 1e-9 * ref; }
// "x is worse than ref": above it by more than the same tolerance.
inline bool worsens(double x, double ref) { return x > ref + 1e-9 * ref; }

}  // namespace mlsys
