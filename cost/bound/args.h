// The arguments of the lower bound, each with a switch (issue 50): `mlsys bound --without ARG`
// turns one off, so that a bound ever found above a valid schedule can be pinned on one argument
// in one command, and the soundness tests check each argument alone against brute force.
// Turning an argument off only ever lowers the bound (each is a floor, a way to raise a floor, or
// a way to combine floors): the bound without it is the bound of the remaining arguments.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mlsys {

enum class BoundArg : uint8_t {
  ComputeFloor,     // each op's compute on its fewest native tiles, summed over its runs
  TrafficFloor,     // graph inputs loaded once, graph outputs stored once
  PartFloors,       // the floor of one op set (every granularity, traversal, retention); off: 0
  RetentionChoice,  // a part's crossing tensors either move or stay (off: all stay, free)
  BandReloads,      // the row and column bands a traversal must reload in a part floor
  StepFloors,       // a part pays the sum of its steps' maxima, not the larger sum
  OrderFloors,      // a part floor's side pairs priced over every tile order
  Cover,            // the cheapest cover of a component by part floors (off: "floors")
  ForcedOps,        // a part counts only the ops no earlier subgraph must have run
  Readers,          // the cover serves each reader of an output that cannot be retained
  EdgeFloors,       // a MatMul feeding a MatMul with an oversized graph-input operand
  RetentionPrices,  // the priced passes tying a kept tensor's two sides (cover and shares)
  Shares,           // the share bound of a component beyond the exact cover
  JointFloors,      // the share bound's joint floors of MatMuls with a claimed operand
  Pressure,         // the share bound's loads of an oversized input by its readers' tiles
  ForcedStores,     // the share bound's stores every subgraph holding an op must write
  ClosedLoads,      // the share bound's loads of a closed op's unretainable output
  Lp,               // the cover's linear relaxation (groups of 21-64 ops)
  UpstreamJoint,    // joint floors also for MatMuls that may be upstream elsewhere, capped there
  StepMixtures,     // the share bound mixes a class's k-steps before a tile's last and its last apart
  UpstreamReloads,  // an upstream MatMul reloads the operand its downstream k-steps sweep in every tile
  ChainClaims,      // a joint floor claims an operand made by a MatMul, or that MatMul's swept operand
  ClassReach,       // an op meets a class only if fusable edges reach it through ops that may share S
  ApartClaims,      // a tensor claimed by several MatMuls no two of which may share a valid subgraph
  SharedClaims,     // readers of a tensor that may share S each claim their strips over their number
  SharedReloads,    // upstream-reloads also where other readers may share S, none holding a strip over steps
  SplitJoint,       // a MatMul with K > N feeds no MatMul where it accumulates (nk > 1): joint with upstream-joint
  LargeParts,       // the relaxation over a large component's small parts, ops in larger ones capped at their shares
  EpilogueTiles,    // a joint MatMul's output is written, or ephemeral with more tiles held (constant lambdas)
  kCount
};

struct BoundArgs {
  uint32_t off = 0;  // bit i: BoundArg i is switched off
  // Test seam (a planted wrong argument): every part floor is multiplied by this; 1 in every run.
  double test_part_scale = 1;
  // Test seam (the soundness checks of upstream-joint alone): the share bound takes the
  // upstream-joint pricing even where the plain one is larger; false in every run.
  bool upstream_joint_alone = false;
  // Test seam (the soundness checks of step-mixtures): every class that may take a split mode
  // takes this one (share_modes.cpp: 0 to 21; lambda 0 before the last k-step, 1 in it, is 10),
  // whatever the total; -1 in every run.
  int step_mixtures_forced = -1;
  // Test seam (the share bound's incremental ascent, share_modes.cpp): every trial is priced whole
  // too, and a trial whose value differs from the whole total throws std::logic_error; false in
  // every run.
  bool check_share_trials = false;
  bool on(BoundArg a) const { return !(off >> static_cast<int>(a) & 1u); }
  BoundArgs& disable(BoundArg a) {
    off |= 1u << static_cast<int>(a);
    return *this;
  }
  bool operator==(const BoundArgs&) const = default;
  static BoundArgs only(BoundArg a) {  // every argument off but one
    BoundArgs b;
    b.off = ((1u << static_cast<int>(BoundArg::kCount)) - 1) & ~(1u << static_cast<int>(a));
    return b;
  }
};

// The names `--without` takes and `bound --json` prints, in enum order.
inline constexpr std::array<std::string_view, static_cast<size_t>(BoundArg::kCount)> kBoundArgNames{
    "compute-floor",  "traffic-floor",  "part-floors",      "retention-choice", "band-reloads",  "step-floors",
    "order-floors",   "cover",          "forced-ops",       "readers",          "edge-floors",   "retention-prices",
    "shares",         "joint-floors",   "pressure",         "forced-stores",    "closed-loads",  "lp",
    "upstream-joint", "step-mixtures",  "upstream-reloads", "chain-claims",     "class-reach",   "apart-claims",
    "shared-claims",  "shared-reloads", "split-joint",      "large-parts",      "epilogue-tiles"};

inline std::string_view boundArgName(BoundArg a) { return kBoundArgNames[static_cast<size_t>(a)]; }
inline std::optional<BoundArg> boundArgByName(std::string_view name) {
  for (size_t i = 0; i < kBoundArgNames.size(); ++i)
    if (kBoundArgNames[i] == name) return static_cast<BoundArg>(i);
  return std::nullopt;
}
// "compute-floor, traffic-floor, ..." (help texts and error messages)
inline std::string boundArgList() {
  std::string s;
  for (std::string_view n : kBoundArgNames) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace mlsys
