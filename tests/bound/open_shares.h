// Helpers of the share bound's argument tests (upstream_joint_test.cpp, step_mixtures_test.cpp,
// upstream_reloads_test.cpp): the bound with the share bound pricing every component, and the
// exact optimum over the spec's whole space to hold it to.
#pragma once
#include "cost/bound/bound.h"
#include "cost/model/problem.h"
#include "engine/exact/exact.h"
#include "tests/test_util.h"

namespace mlsys::test {

// The share bound alone on every component (no cover, no linear relaxation), every op open, with
// `args` (more arguments off, or a test seam).
inline LowerBound openShares(const Problem& p, const ModelOptions& m, BoundArgs args = {}) {
  BoundOptions bo;
  bo.max_cover_ops = 0;
  bo.share_parts = 0;
  bo.args = args;
  bo.args.disable(BoundArg::Lp);
  return lowerBound(p, m, bo);
}

inline ExactResult fullSpaceOptimum(const Problem& p, const ModelOptions& m) {
  ExactOptions o;
  o.full_space = true;
  return solveExact(p, m, o, neverStop());
}

}  // namespace mlsys::test
