#include "engine/output.h"

#include "cost/json_util.h"

namespace mlsys {

double OutputWriter::offer(const Schedule& s, double now_s, bool force_write) {
  Evaluation ev = evaluateSchedule(p_, s, m_);
  if (!ev.valid) return -1;
  std::lock_guard<std::mutex> lk(mu_);
  if (best_total_ >= 0 && ev.total >= best_total_) return ev.total;
  best_ = s;
  best_.reported.clear();
  best_lat_.clear();
  for (const auto& r : ev.subgraphs) best_lat_.push_back(r.cost.latency);
  best_total_ = ev.total;
  pending_ = true;
  if (force_write || now_s - last_write_s_ >= min_interval_) {
    writeLocked();
    last_write_s_ = now_s;
    if (first_write_s_ < 0) first_write_s_ = now_s;
  }
  return ev.total;
}

void OutputWriter::flush() {
  std::lock_guard<std::mutex> lk(mu_);
  if (pending_) writeLocked();
}

void OutputWriter::writeLocked() {
  writeFileAtomic(path_, scheduleToJson(best_, p_, best_lat_));
  pending_ = false;
  ++writes_;
}

double OutputWriter::best() const {
  std::lock_guard<std::mutex> lk(mu_);
  return best_total_;
}

bool OutputWriter::hasBest() const {
  std::lock_guard<std::mutex> lk(mu_);
  return best_total_ >= 0;
}

}  // namespace mlsys
