#include "engine/search/bound_guard.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cost/model/json_util.h"

namespace mlsys {

void BoundGuard::setOptions(const BoundOptions& bo) {
  std::lock_guard<std::mutex> lk(mu_);
  bo_ = bo;
  bo_.give_up = nullptr;  // the run's timer is gone by the time a suspect is looked for
  bo_.on_value = nullptr;
}

void BoundGuard::setStatic(double bound, const BoundOptions& bo) {
  setOptions(bo);
  raise(bound, "the lower bound");
}

bool BoundGuard::raise(double bound, const std::string& who) {
  std::shared_ptr<const Schedule> best;
  double bestLat = -1;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (dropped_ || !(bound > bound_)) return false;
    if (best_ >= 0 && best_ < bound * (1 - 1e-9)) {  // above a valid schedule: a false certificate
      best = best_s_;
      bestLat = best_;
    } else {
      bound_ = bound;
      source_ = who;
      if (best_ >= 0 && meetsBound(best_, bound_)) optimal_.store(true, std::memory_order_relaxed);
    }
  }
  if (bestLat >= 0) {
    violated(bound, bestLat, who == "the lower bound" ? "" : who + " raised the bound above a valid schedule",
             best.get());
    return false;
  }
  if (on_raise_) on_raise_(bound, who);
  return true;
}

double BoundGuard::bound() const {
  std::lock_guard<std::mutex> lk(mu_);
  return dropped_ ? 0 : bound_;
}

std::shared_ptr<const BoundGuard::Components> BoundGuard::componentsOf(const Problem& p, const LowerBound& lb) {
  auto c = std::make_shared<Components>();
  c->of_op.assign(static_cast<size_t>(p.numOps()), -1);
  for (const BoundComponent& bc : lb.components) {
    const int id = static_cast<int>(c->size.size());
    for (OpId o : bc.ops)
      if (o >= 0 && o < p.numOps()) c->of_op[static_cast<size_t>(o)] = id;
    c->value.push_back(bc.value);
    c->size.push_back(static_cast<int>(bc.ops.size()));
  }
  return c;
}

void BoundGuard::setComponents(std::shared_ptr<const Components> c) {
  std::lock_guard<std::mutex> lk(mu_);
  components_ = std::move(c);
}

std::shared_ptr<const BoundGuard::Components> BoundGuard::components() const {
  std::lock_guard<std::mutex> lk(mu_);
  return components_;
}

bool BoundGuard::dropped() const {
  std::lock_guard<std::mutex> lk(mu_);
  return dropped_;
}

std::optional<BoundViolation> BoundGuard::violation() const {
  std::lock_guard<std::mutex> lk(mu_);
  return violation_;
}

bool BoundGuard::check(const Schedule& s, double latency, const std::vector<double>& subgraph_latencies) {
  double bound = 0;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (dropped_) return true;
    bound = bound_;
    if (best_ < 0 || latency < best_) {
      best_ = latency;
      best_s_ = std::make_shared<const Schedule>(s);
    }
    if (meetsBound(latency, bound) && !(latency < bound * (1 - 1e-9))) optimal_.store(true, std::memory_order_relaxed);
  }
  // Below the bound by more than the rounding the bound allows for (1e-9 relative).
  if (bound > 0 && latency < bound * (1 - 1e-9)) {
    violated(bound, latency, "", &s);
    return false;
  }
  // Each subgraph against the part floor of its ops (any granularity, order and retention).
  if (p_.numOps() > kPartCheckOps || subgraph_latencies.size() != s.subgraphs.size()) return true;
  int fresh = 0;
  for (size_t i = 0; i < s.subgraphs.size(); ++i) {
    std::vector<OpId> key = s.subgraphs[i].ops;
    std::sort(key.begin(), key.end());
    double floor = 0;
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = floors_.find(key);
      if (it != floors_.end()) floor = it->second;
      else if (fresh >= kPartChecksPerBest) continue;
      else {
        ++fresh;
        floor = -1;
      }
    }
    if (floor < 0) {
      std::vector<OpId> topo = key;
      std::sort(topo.begin(), topo.end(), [&](OpId a, OpId b) { return p_.topo_pos[a] < p_.topo_pos[b]; });
      floor = partFloor(p_, m_, topo, nullptr, bo_.args).value;
      std::lock_guard<std::mutex> lk(mu_);
      floors_.emplace(key, floor);
    }
    if (floor > 0 && subgraph_latencies[i] < floor * (1 - 1e-9)) {
      std::string ops;
      for (OpId o : s.subgraphs[i].ops) ops += (ops.empty() ? "" : ",") + std::to_string(o);
      violated(floor, subgraph_latencies[i], fmt::format("part-floors: subgraph {} (ops [{}])", i, ops), &s);
      return false;
    }
  }
  return true;
}

void BoundGuard::exactViolation(const std::string& who, long count, const Schedule* s, double latency) {
  double bound = 0;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (dropped_) return;
    bound = bound_;
  }
  violated(bound, latency,
           fmt::format("{}: {} exact price(s) below the floors it pruned with (lb_violations)", who, count), s);
}

// The arguments that each alone hold the bound above `latency`, within half a second.
std::string BoundGuard::suspects(double latency) {
  if (source_ != "the lower bound") return source_;
  BoundOptions bo = bo_;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  bo.give_up = [until] { return std::chrono::steady_clock::now() > until; };
  const BoundSuspects s = boundSuspects(p_, m_, bo, latency);
  if (!s.complete) return "not found within 0.5 s: run `mlsys bound --json` on the file";
  if (s.args.empty()) return "several arguments together: run `mlsys bound --json` on the file";
  std::string names;
  for (BoundArg a : s.args) names += (names.empty() ? "" : " or ") + std::string(boundArgName(a));
  return names;
}

std::string BoundGuard::writeReport(const BoundViolation& v, const Schedule* s) const {
  static std::atomic<int> seq{0};
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) return "";
  const std::filesystem::path path =
      dir / fmt::format("mlsys-bound-violation-{}-{}.json", static_cast<long>(getpid()), seq.fetch_add(1));
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto raw = [&](const std::string& json) { w.RawValue(json.c_str(), json.size(), rapidjson::kObjectType); };
  w.StartObject();
  w.Key("model");
  w.String(m_.describe().c_str());
  w.Key("bound");
  w.Double(v.bound);
  w.Key("latency");
  w.Double(v.latency);
  w.Key("argument");
  w.String(v.argument.c_str());
  w.Key("problem");
  raw(problemToJson(p_));
  w.Key("schedule");
  if (s) raw(scheduleToJson(*s, p_, std::vector<double>(s->subgraphs.size(), 0)));
  else w.Null();
  w.EndObject();
  std::ofstream f(path);
  if (!f) return "";
  f << buf.GetString() << "\n";
  f.close();
  return f ? path.string() : "";
}

void BoundGuard::violated(double bound, double latency, const std::string& argument, const Schedule* s) {
  std::lock_guard<std::mutex> lk(mu_);
  if (dropped_) return;
  BoundViolation v{bound, latency, argument.empty() ? suspects(latency) : argument, ""};
  v.file = writeReport(v, s);
  dropped_ = true;
  optimal_.store(false, std::memory_order_relaxed);
  violation_ = v;
  emitLine(log_, fmt::format("mlsys: internal error: lower bound {} is above a valid schedule {} (argument {}); {}; "
                             "the bound is dropped for the rest of the run (gap unknown); please report it "
                             "(README, \"Exit codes\")",
                             formatDouble(v.bound), formatDouble(v.latency), v.argument,
                             v.file.empty() ? std::string("the report file could not be written")
                                            : "the problem and the schedule are in " + v.file));
#ifndef NDEBUG
  if (abort_in_debug_) std::abort();
#endif
}

}  // namespace mlsys
