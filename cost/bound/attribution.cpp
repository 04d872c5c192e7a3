// Which argument raised the bound, and by how much (bound.h, attributeBound; `bound --json`).
// Leave one out: the bound is computed again with each argument that is on switched off; what a
// component loses is what that argument gave it beyond the others. Arguments can overlap (two
// may each prove the same value alone, and then neither is charged), so the amounts are a
// diagnosis, not a decomposition: an argument that gives nothing here may still hold the
// bound up together with another.
#include "cost/bound/bound.h"

namespace mlsys {

BoundAttribution attributeBound(const Problem& p, const ModelOptions& m, const BoundOptions& bo,
                                const LowerBound& full) {
  BoundAttribution at;
  at.component_raise.assign(full.components.size(), {});
  for (size_t i = 0; i < static_cast<size_t>(BoundArg::kCount); ++i) {
    const auto a = static_cast<BoundArg>(i);
    if (!bo.args.on(a)) continue;
    if (bo.give_up && bo.give_up()) return at;  // complete stays false
    BoundOptions without = bo;
    without.args.disable(a);
    const LowerBound lb = lowerBound(p, m, without);
    if (bo.give_up && bo.give_up()) return at;  // that run may have given up mid-way: not comparable
    at.total_raise.push_back({a, full.value() - lb.value()});
    for (size_t c = 0; c < full.components.size() && c < lb.components.size(); ++c)
      at.component_raise[c].push_back({a, full.components[c].value - lb.components[c].value});
  }
  at.complete = true;
  return at;
}

BoundSuspects boundSuspects(const Problem& p, const ModelOptions& m, const BoundOptions& bo, double latency) {
  BoundSuspects s;
  for (size_t i = 0; i < static_cast<size_t>(BoundArg::kCount); ++i) {
    const auto a = static_cast<BoundArg>(i);
    if (!bo.args.on(a)) continue;
    if (bo.give_up && bo.give_up()) return s;
    BoundOptions without = bo;
    without.args.disable(a);
    const double v = lowerBound(p, m, without).value();
    if (bo.give_up && bo.give_up()) return s;
    if (v <= latency * (1 + 1e-9)) s.args.push_back(a);
  }
  s.complete = true;
  return s;
}

}  // namespace mlsys
