// Elite pool (after OR-Tools' SharedSolutionRepository): the K best distinct schedules, ranked
// by (latency, canonical encoding). Workers offer improvements and draw restarts biased to the
// best. A mutex and a small vector are enough at these rates.
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "cost/model/schedule.h"
#include "moves/move.h"

namespace mlsys {

class ElitePool {
 public:
  explicit ElitePool(int capacity) : cap_(capacity < 1 ? 1 : capacity) {}
  // Adds if it is distinct and among the K best. Returns true if it entered.
  bool offer(const Schedule& s, double latency);
  // A schedule drawn with bias to the best (index floor(K * u^2)); false if empty.
  bool sample(Rng& rng, Schedule& out, double& latency) const;
  int size() const;
  // The best latency in the pool (+infinity if empty); best(): the best schedule, false if empty.
  double bestLatency() const;
  bool best(Schedule& out, double& latency) const;

  static std::string encode(const Schedule& s);

 private:
  struct Elite {
    double latency;
    std::string key;
    Schedule s;
  };
  int cap_;
  mutable std::mutex mu_;
  std::vector<Elite> elites_;  // sorted by (latency, key)
};

}  // namespace mlsys
