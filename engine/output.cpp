#include "engine/output.h"

#include <algorithm>
#include <chrono>

#include "cost/json_util.h"
#include "engine/files.h"
#include "cost/subgraph.h"

namespace mlsys {
namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void raiseTo(std::atomic<double>& a, double v) {
  double cur = a.load(std::memory_order_relaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

}  // namespace

double OutputWriter::offer(const Schedule& s, double now_s, bool force_write) {
  auto t0 = std::chrono::steady_clock::now();
  Evaluation ev = evaluateSchedule(p_, s, m_);
  raiseTo(eval_s_, secondsSince(t0));
  if (!ev.valid) return -1;
  std::lock_guard<std::mutex> lk(mu_);
  if (best_total_ >= 0 && ev.total >= best_total_) return ev.total;
  best_ = s;
  best_.reported.clear();
  best_lat_.clear();
  for (const auto& r : ev.subgraphs) best_lat_.push_back(r.cost.latency);
  best_total_ = ev.total;
  pending_ = true;
  best_write_est_.store(estimateWriteLocked(), std::memory_order_relaxed);
  if (dl_) now_s = dl_->elapsed();  // another offer may have written while this one waited
  // Writes are throttled to at most one per min_interval, and to a third of the time at most
  // when a write is slow.
  double interval = std::max(min_interval_, 3 * write_s_.load(std::memory_order_relaxed));
  if (force_write || (now_s - last_write_s_ >= interval && fitsLocked())) {
    writeLocked();
    last_write_s_ = now_s;
    if (first_write_s_ < 0) first_write_s_ = now_s;
  }
  return ev.total;
}

void OutputWriter::flush(bool may_overrun) {
  std::lock_guard<std::mutex> lk(mu_);
  if (pending_ && (may_overrun || fitsLocked())) writeLocked();
}

double OutputWriter::estimateWriteLocked() const {
  double bytes = 64;
  for (const auto& sg : best_.subgraphs) {
    double tiles = 0;
    if (sg.trav.kind == TraversalKind::Custom) tiles = static_cast<double>(sg.trav.order.size());
    else if (sg.trav.kind != TraversalKind::Raster) {
      auto [ntw, nth] = subgraphGrid(p_, sg);
      tiles = static_cast<double>(ntw) * static_cast<double>(nth);
    }
    bytes += 64 + 8 * static_cast<double>(sg.ops.size() + sg.retain.size()) + 9 * tiles;
  }
  return bytes * sec_per_byte_;
}

bool OutputWriter::fitsLocked() const {
  // 1.5x: write speed varies with the page cache and the disk (88-128 MB took 0.24-0.67 s).
  return !dl_ || 1.5 * estimateWriteLocked() <= dl_->remaining();
}

void OutputWriter::writeLocked() {
  auto t0 = std::chrono::steady_clock::now();
  std::string json = scheduleToJson(best_, p_, best_lat_);
  writeFileAtomic(path_, json);
  double dt = secondsSince(t0);
  raiseTo(write_s_, dt);
  if (json.size() >= (1 << 20)) sec_per_byte_ = std::max(sec_per_byte_, dt / static_cast<double>(json.size()));
  written_total_ = best_total_;
  pending_ = false;
  ++writes_;
}

double OutputWriter::best() const {
  std::lock_guard<std::mutex> lk(mu_);
  return best_total_;
}

double OutputWriter::writtenBest() const {
  std::lock_guard<std::mutex> lk(mu_);
  return written_total_;
}

bool OutputWriter::hasBest() const {
  std::lock_guard<std::mutex> lk(mu_);
  return best_total_ >= 0;
}

}  // namespace mlsys
