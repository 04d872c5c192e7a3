// The adaptive LNS worker's portfolio of slices (lns.adaptive): see slices.h.
#include "engine/search/slices.h"

#include <algorithm>
#include <cmath>

namespace mlsys {

// The adaptive LNS worker (lns.adaptive): slices of lns.slice_seconds, each spent on one kind
// of work from the pool's best: LNS windows, annealing, (with lns.polish) the granularity polish
// (coordinate descent, Lns::polishGranularities), or (on a graph of at least 8 times
// lns.region_ops ops) one region annealed on its own, or (lns.component_regions, once the run's bound
// has ended) one fusion component re-optimised on its own (RegionSearch, regions.h), or (with
// lns.reader_window_seconds) reader windows only (Lns::readerWindows; counted as measured at 0 from
// the start, so first run after kExplore slices: at 2 s, measured, mlsys-2026-5 lost 0.1-1% to
// a first reader slice in the last half second). A slice's yield is
// the relative improvement it made on the schedule it started from, per second, less what it
// gained by adopting another worker's better schedule on the way (SearchRun::adoptedGain); each
// kind keeps a moving average of its yields and the next slice goes to the kind with the highest
// (a kind not measured yet first; ties to the earlier kind in that order). A kind not run for its
// wait (kExplore slices at first) gets the next one, so that a kind that stopped paying is
// measured again; each such forced slice that yields less than the leader's average doubles that
// kind's wait (up to kMaxWait), and a slice that beats it resets the wait; a kind whose last slice
// ran over (a reader window of seconds in a half-second slice) waits as many times longer, so that
// measuring a kind that does not pay keeps the same small share of the time (at 30 s, 2 threads,
// random-n1000 spent ~18 s in six reader windows without one gain): on graphs of thousands
// of ops, where half-second annealing and polish slices yield nothing, the windows keep about 90%
// of the worker's time instead of two thirds. Graphs where the exact windows pay keep the worker
// on windows; where they are slow or dry (large dimensions, annealing throughput decides) it
// becomes a second annealer; the polish takes the granularities the annealer's random draws left
// a little above their best (it returns at once on a schedule it has already swept).
void adaptiveSlices(SearchRun& run, int id, IncrementalEvaluator& ev, Schedule& start, Annealer& annealer, Lns& lns,
                    RegionSearch& regions) {
  constexpr int kExplore = 4, kMaxWait = 32;
  enum { kLns, kSa, kPolish, kRegion, kReaders, kAll };
  bool on[kAll] = {true, true, run.cfg.lns_polish, RegionSearch::applies(run.p, run.cfg),
                   run.cfg.lns_reader_window_seconds > 0};
  double yield[kAll];               // moving average per kind; -1: not measured yet
  int idle[kAll] = {}, wait[kAll];  // slices since the kind last ran; idle slices before it is measured again
  std::fill(yield, yield + kAll, -1.0);
  yield[kReaders] = 0;  // counted as measured: first run after its wait, never in a short run's first slices
  std::fill(wait, wait + kAll, kExplore);
  double span[kAll];  // the kind's last slice in slice lengths (>= 1): its wait counts that many times
  std::fill(span, span + kAll, 1.0);
  while (!run.stop.stopNow()) {
    on[kRegion] = regions.ready();  // component regions wait for the run's bound
    int k = -1, leader = -1;
    for (int i = 0; i < kAll && k < 0; ++i)
      if (on[i] && yield[i] < 0) k = i;
    if (k < 0) {
      k = 0;
      for (int i = 1; i < kAll; ++i)
        if (on[i] && yield[i] > yield[k]) k = i;
      leader = k;
      for (int i = 0; i < kAll; ++i)
        if (on[i] && i != k && idle[i] >= wait[i] * span[i] && (idle[k] < wait[k] * span[k] || idle[i] > idle[k]))
          k = i;
    }
    const double leaderYield = leader >= 0 && leader != k ? yield[leader] : -1;  // >= 0: a forced slice
    Schedule from;
    double ref = 0;  // the pool is never empty in a run (runSearch offers the start); 0: no yield measured
    if (!run.startFromBest(id, from, ref)) from = start;
    const double t0 = run.dl.elapsed(), until = t0 + run.cfg.lns_slice_seconds, adopted0 = run.adoptedGain(id);
    if (k == kLns) lns.windows(ev, from, until);
    else if (k == kPolish) lns.polishGranularities(ev, from, until);
    else if (k == kRegion) regions.run(ev, from, until, &lns);
    else if (k == kReaders) lns.readerWindows(ev, from, until);
    const double reached = k == kSa ? annealer.run(ev, from, until) : ev.valid() ? ev.total() : ref;
    const double dt = std::max(1e-3, run.dl.elapsed() - t0);
    const double own = ref - reached - (run.adoptedGain(id) - adopted0);
    const double y = ref > 0 && own > 0 ? own / ref / dt : 0;
    if (leaderYield >= 0) wait[k] = y < leaderYield ? std::min(kMaxWait, 2 * wait[k]) : kExplore;
    yield[k] = yield[k] < 0 ? y : 0.5 * yield[k] + 0.5 * y;
    span[k] = std::max(1.0, std::round(dt / run.cfg.lns_slice_seconds));
    for (int i = 0; i < kAll; ++i) idle[i] = i == k ? 0 : idle[i] + 1;
    if (ev.valid()) start = ev.schedule();
  }
}

}  // namespace mlsys
