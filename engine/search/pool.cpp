#include "engine/search/pool.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace mlsys {

std::string ElitePool::encode(const Schedule& s) {
  std::ostringstream os;
  for (const auto& sg : s.subgraphs) {
    for (OpId o : sg.ops) os << o << ',';
    os << '|' << sg.gran.w << ',' << sg.gran.h << ',' << sg.gran.k << '|' << static_cast<int>(sg.trav.kind);
    for (int32_t t : sg.trav.order) os << ',' << t;
    os << '|';
    for (TensorId t : sg.retain) os << t << ',';
    os << ';';
  }
  return os.str();
}

bool ElitePool::offer(const Schedule& s, double latency) {
  std::string key = encode(s);
  std::lock_guard<std::mutex> lk(mu_);
  for (const auto& e : elites_)
    if (e.key == key) return false;
  if (static_cast<int>(elites_.size()) >= cap_) {
    const auto& w = elites_.back();
    if (latency > w.latency || (latency == w.latency && key >= w.key)) return false;
  }
  Elite e{latency, std::move(key), s};
  auto pos = std::lower_bound(elites_.begin(), elites_.end(), e, [](const Elite& a, const Elite& b) {
    return a.latency < b.latency || (a.latency == b.latency && a.key < b.key);
  });
  elites_.insert(pos, std::move(e));
  if (static_cast<int>(elites_.size()) > cap_) elites_.pop_back();
  return true;
}

bool ElitePool::sample(Rng& rng, Schedule& out, double& latency) const {
  double u = rand01(rng);
  std::lock_guard<std::mutex> lk(mu_);
  if (elites_.empty()) return false;
  size_t i = std::min(elites_.size() - 1, static_cast<size_t>(static_cast<double>(elites_.size()) * u * u));
  out = elites_[i].s;
  latency = elites_[i].latency;
  return true;
}

double ElitePool::bestLatency() const {
  std::lock_guard<std::mutex> lk(mu_);
  return elites_.empty() ? std::numeric_limits<double>::infinity() : elites_.front().latency;
}

bool ElitePool::best(Schedule& out, double& latency) const {
  std::lock_guard<std::mutex> lk(mu_);
  if (elites_.empty()) return false;
  out = elites_.front().s;
  latency = elites_.front().latency;
  return true;
}

int ElitePool::size() const {
  std::lock_guard<std::mutex> lk(mu_);
  return static_cast<int>(elites_.size());
}

}  // namespace mlsys
