// A test fixture shared by the LNS tests: one worker's run on a problem.
#pragma once

#include "cost/pricing/incremental.h"
#include "engine/base/deadline.h"
#include "engine/io/config.h"
#include "engine/search/run_state.h"

namespace mlsys::test {

// One LNS worker's run on a problem (a budget of 60 s, nothing written).
struct OneWorker {
  static Deadline budget() {
    Deadline d;
    d.setBudget(60);
    return d;
  }
  OneWorker(const Problem& p, const SearchConfig& c)
      : cfg(c),
        dl(budget()),
        out(p, cfg.model, ""),
        run(p, cfg, 7, dl, out, 0, nullptr, 0.0, true),
        ev(p, cfg.model, 64) {
    run.stats.setWorkers(1);
  }
  SearchConfig cfg;
  Deadline dl;
  OutputWriter out;
  SearchRun run;
  IncrementalEvaluator ev;
};

}  // namespace mlsys::test
