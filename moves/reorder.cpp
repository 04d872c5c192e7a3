#include <algorithm>

#include "moves/moves.h"

namespace mlsys {

// Move a subgraph t to sit right after s, where s produces one of t's inputs; or swap two
// adjacent subgraphs. Retention of the moved subgraphs is dropped (it links neighbours).
bool ReorderMove::propose(IncrementalEvaluator& ev, Rng& rng, Change& out) {
  const int n = ev.size();
  if (n < 3) return false;
  const int t = 1 + static_cast<int>(randBelow(rng, static_cast<uint64_t>(n - 1)));
  const auto& sched = ev.schedule().subgraphs;
  int target = t - 1;  // plain swap of t-1 and t by default
  if (rng() & 1) {
    // The latest earlier subgraph that writes one of t's boundary inputs.
    int last = -1;
    for (TensorId x : ev.info(t).boundary) last = std::max(last, ev.lastWriterBefore(x, t));
    if (last < 0 || last + 1 >= t) return false;
    target = last + 1;
    out.first = target;
    out.count = t - target + 1;
    out.repl.clear();
    out.repl.push_back(sched[t]);
    for (int j = target; j < t; ++j) out.repl.push_back(sched[j]);
  } else {
    out.first = t - 1;
    out.count = 2;
    out.repl = {sched[t], sched[t - 1]};
  }
  out.repl.front().retain.clear();
  if (out.repl.size() >= 2) out.repl[out.repl.size() - 2].retain.clear();
  out.repl.back().retain.clear();
  if (out.first > 0 && !ev.retainedInto(out.first).empty()) return false;  // keep it simple: no broken links
  return true;
}

}  // namespace mlsys
