#include "tests/bound_check/bound_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace mlsys::soundness {

namespace {

// The component arguments a variant may switch alone (the part floor's own are partVariants').
constexpr BoundArg kStructural[] = {
    BoundArg::Cover,       BoundArg::ForcedOps,       BoundArg::Readers,  BoundArg::EdgeFloors,
    BoundArg::Shares,      BoundArg::JointFloors,     BoundArg::Pressure, BoundArg::ForcedStores,
    BoundArg::ClosedLoads, BoundArg::RetentionPrices, BoundArg::Lp};
constexpr BoundArg kPartArgs[] = {BoundArg::OrderFloors, BoundArg::StepFloors, BoundArg::BandReloads,
                                  BoundArg::RetentionChoice};

BoundOptions withOff(BoundArgs args, int cover = 20, int shareParts = 24) {
  BoundOptions bo;
  bo.args = args;
  bo.max_cover_ops = cover;
  bo.share_parts = shareParts;
  return bo;
}

// Every argument on but `keep` among the structural ones (the part floors and global floors stay).
BoundArgs onlyStructural(BoundArg keep) {
  BoundArgs a;
  for (BoundArg x : kStructural)
    if (x != keep) a.disable(x);
  return a;
}

// The connected op sets of p (V4: linked through tensors made and read inside), each once.
std::vector<std::vector<OpId>> connectedSets(const Problem& p) {
  const int n = p.numOps();
  std::vector<std::vector<OpId>> out;
  if (n > 16) return out;
  for (uint32_t mask = 1; mask < (1u << n); ++mask) {
    std::vector<OpId> ops;
    for (int o = 0; o < n; ++o)
      if (mask >> o & 1) ops.push_back(o);
    uint32_t seen = mask & (~mask + 1), frontier = seen;
    while (frontier) {
      const int o = __builtin_ctz(frontier);
      frontier &= frontier - 1;
      uint32_t nb = 0;
      for (TensorId t : p.ops[o].inputs)
        if (const OpId pr = p.producer[t]; pr >= 0) nb |= 1u << pr;
      for (TensorId t : p.ops[o].outputs)
        for (OpId c : p.consumers[t]) nb |= 1u << c;
      nb &= mask & ~seen;
      seen |= nb;
      frontier |= nb;
    }
    if (seen != mask) continue;
    std::sort(ops.begin(), ops.end(), [&](OpId a, OpId b) { return p.topo_pos[a] < p.topo_pos[b]; });
    out.push_back(std::move(ops));
  }
  return out;
}

std::string opsText(const std::vector<OpId>& ops) {
  std::string s;
  for (OpId o : ops) s += (s.empty() ? "" : ",") + std::to_string(o);
  return "[" + s + "]";
}

bool above(double claim, double cost) { return claim > cost * (1 + 1e-9) + 1e-9; }

}  // namespace

std::vector<std::pair<std::string, ModelOptions>> modelSettings() {
  ModelOptions reduction, native;
  reduction.set("k_limit", "reduction");
  native.set("matmul_compute", "native_depth");
  return {{"default", ModelOptions{}}, {"k_limit=reduction", reduction}, {"matmul_compute=native_depth", native}};
}

std::vector<BoundVariant> boundVariants(CheckLevel level) {
  std::vector<BoundVariant> v;
  v.push_back({"all on", withOff({})});
  for (size_t i = 0; i < static_cast<size_t>(BoundArg::kCount); ++i) {
    const auto a = static_cast<BoundArg>(i);
    v.push_back({"without " + std::string(boundArgName(a)), withOff(BoundArgs{}.disable(a))});
  }
  v.push_back({"cover limit 0", withOff({}, 0)});
  v.push_back({"cover limit 0, share parts 2", withOff({}, 0, 2)});
  // upstream-joint alone: its pricing even where the plain share bound is larger.
  BoundArgs alone;
  alone.upstream_joint_alone = true;
  v.push_back({"upstream-joint alone, cover limit 0", withOff(alone, 0)});
  v.push_back({"upstream-joint alone, cover limit 0, share parts 2", withOff(alone, 0, 2)});
  // step-mixtures forced: every class with nk > 1 points at lambda 0 before a tile's last k-step
  // and 1 in it (split mode 10), or the reverse (11), whatever the total.
  for (int split : {10, 11}) {
    BoundArgs forced;
    forced.step_mixtures_forced = split;
    const std::string name = "step-mixtures forced " + std::string(split == 10 ? "(0, 1)" : "(1, 0)");
    v.push_back({name + ", cover limit 0", withOff(forced, 0)});
    v.push_back({name + ", cover limit 0, share parts 2", withOff(forced, 0, 2)});
  }
  // large-parts on every component (large_from 1), the groups' relaxation off: the share bound's
  // caps and the small parts' rows decide.
  for (int K : {1, 2, 3})
    for (int shareParts : {24, 2}) {
      BoundOptions bo = withOff(BoundArgs{}.disable(BoundArg::Lp), 0, shareParts);
      bo.large_from = 1;
      bo.large_part_ops = K;
      v.push_back({"large-parts up to " + std::to_string(K) + " ops from 1 op, cover limit 0, without lp" +
                       (shareParts == 2 ? ", share parts 2" : ""),
                   bo});
    }
  if (level == CheckLevel::Quick) return v;
  for (BoundArg a : kStructural) {
    v.push_back({"only " + std::string(boundArgName(a)), withOff(onlyStructural(a))});
    v.push_back({"only " + std::string(boundArgName(a)) + ", cover limit 0", withOff(onlyStructural(a), 0)});
    v.push_back({"without " + std::string(boundArgName(a)) + ", cover limit 0, share parts 2",
                 withOff(BoundArgs{}.disable(a), 0, 2)});
  }
  return v;
}

std::vector<std::pair<std::string, BoundArgs>> partVariants(CheckLevel level) {
  std::vector<std::pair<std::string, BoundArgs>> v = {{"all on", {}}};
  for (BoundArg a : kPartArgs) {
    v.push_back({"without " + std::string(boundArgName(a)), BoundArgs{}.disable(a)});
    if (level == CheckLevel::Quick) continue;
    BoundArgs only;
    for (BoundArg b : kPartArgs)
      if (b != a) only.disable(b);
    v.push_back({"only " + std::string(boundArgName(a)), only});
  }
  return v;
}

CheckResult checkBound(const Problem& p, const ModelOptions& m, const Space& space, CheckLevel level,
                       double reference_seconds) {
  CheckResult r;
  std::ostringstream head;
  head << "model " << m.describe() << "; problem " << problemToJson(p);
  // Every part floor against the cheapest subgraph of its ops.
  for (const std::vector<OpId>& S : connectedSets(p)) {
    const SubgraphBest best = bestSubgraph(p, m, S, space);
    if (!best.valid) continue;
    for (const auto& [name, args] : partVariants(level)) {
      const double floor = partFloor(p, m, S, nullptr, args).value;
      ++r.part_checks;
      if (above(floor, best.latency)) {
        std::ostringstream os;
        os << "part floor (" << name << ") of ops " << opsText(S) << " is " << floor << " above the subgraph's cost "
           << best.latency << " at [" << best.gran.w << "," << best.gran.h << "," << best.gran.k << "]; " << head.str();
        r.violations.push_back(os.str());
      }
    }
  }
  // The whole bound against the cheapest schedule.
  const GraphBest g = bestSchedule(p, m, space, reference_seconds);
  r.reference_found = g.found;
  if (!g.found) return r;
  r.optimum = g.total;
  for (const BoundVariant& v : boundVariants(level)) {
    const double b = lowerBound(p, m, v.bo).value();
    if (v.name == "all on") r.bound = b;
    ++r.bound_checks;
    if (above(b, g.total)) {
      std::ostringstream os;
      os << "bound (" << v.name << ") " << b << " is above a valid schedule " << g.total << "; " << head.str()
         << "; schedule " << scheduleToJson(g.schedule, p, g.latencies);
      r.violations.push_back(os.str());
    }
  }
  return r;
}

}  // namespace mlsys::soundness
