// The random problem generator (random_problem.h). Ops are added one at a time; each input is an
// existing tensor (weighted towards the motif the graph aims for) or a fresh graph input of the
// shape the role needs. A graph aims for one motif, drawn first; if the drawn graph lacks it, the
// graph is drawn again (up to kTries times, same stream of choices, so still deterministic).
#include "tests/soundness/random_problem.h"

#include <algorithm>
#include <array>
#include <random>

namespace mlsys::soundness {
namespace {

// The source of every choice: a std::mt19937_64 stream, or a byte string read front to back
// (zeros once it runs out).
class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  Draw(const uint8_t* data, size_t size) : bytes_(data), size_(size), from_bytes_(true) {}

  // Uniform in [0, n) (n <= 1: 0). Rejection sampling on the generator; bytes modulo n.
  uint64_t below(uint64_t n) {
    if (n <= 1) return 0;
    if (from_bytes_) {
      uint64_t v = 0;
      for (uint64_t span = 1; span < n && span < (uint64_t{1} << 56); span <<= 8) v = (v << 8) | nextByte();
      return v % n;
    }
    return soundness::below(rng_, n);
  }
  i64 between(i64 lo, i64 hi) {
    return hi <= lo ? lo : lo + static_cast<i64>(below(static_cast<uint64_t>(hi - lo + 1)));
  }
  bool percent(int pc) { return static_cast<int>(below(100)) < pc; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  uint8_t nextByte() { return pos_ < size_ ? bytes_[pos_++] : 0; }
  std::mt19937_64 rng_{0};
  const uint8_t* bytes_ = nullptr;
  size_t size_ = 0, pos_ = 0;
  bool from_bytes_ = false;
};

enum Role : uint8_t { kLhs = 1, kRhs = 2, kPw = 4 };
enum class Theme : uint8_t { MultiRole, Residual, Diamond, SharedWeight, MmPwMm, PwToMm, MmToMm, Free };
constexpr int kTries = 40;

// The spec's lists after max_dim: the tensor dims and the reduction lengths.
struct Lists {
  std::vector<i64> dims, ks, pow2;
};

Lists listsOf(const RandomSpec& s) {
  const i64 cap = s.max_dim > 0 ? s.max_dim : kMaxDim;
  Lists l;
  for (i64 d : s.dims)
    if (d >= 1 && d <= cap) l.dims.push_back(d);
  if (l.dims.empty()) l.dims.push_back(std::min<i64>(cap, 64));
  const i64 kcap = std::min(cap, std::max<i64>(s.max_k, 1));
  for (i64 k = 64; k <= kcap; k *= 2) l.pow2.push_back(k);
  for (i64 d : l.dims)
    if (d >= 64 && d <= kcap) l.ks.push_back(d);
  if (l.pow2.empty()) l.pow2 = l.dims.front() <= kcap ? std::vector<i64>{l.dims.front()} : std::vector<i64>{kcap};
  if (l.ks.empty()) l.ks = l.pow2;
  return l;
}

struct TInfo {
  i64 h, w;
  OpId producer = -1;
  uint8_t roles = 0;  // Role bits it is read in
  int uses = 0;
};

// Weights of the choices for one graph (by its theme).
struct Bias {
  int matmul_pc = 50;      // chance an op is a MatMul
  int multi = 0;           // reading a tensor in a role it was not read in yet (0: weight 1, < 0: never)
  int share = 2;           // a graph input already read as RHS, read as RHS again
  int reread = 1;          // a produced tensor already read, read again (residuals, diamonds)
  int square_pc = 50;      // chance the graph is built on one square side
  int join_pc = 35;        // chance a Pointwise has 2-3 inputs
  std::vector<int> kinds;  // op types to force in order (1 MatMul, 2 Pointwise), from a random start
};

class Builder {
 public:
  Builder(Draw& d, const Lists& l, const Bias& b)
      : d_(d), l_(l), b_(b), square_(d.percent(b.square_pc)), base_(d.pick(l.dims)) {}

  void addOp(bool mm) {
    Op op;
    op.type = mm ? OpType::MatMul : OpType::Pointwise;
    if (mm) matmulInputs(op);
    else pointwiseInputs(op);
    const TInfo& ref = ts_[op.inputs[0]];
    i64 oh = ref.h, ow = ref.w;
    if (mm) ow = ts_[op.inputs[1]].w;
    op.outputs = {fresh(oh, ow)};
    ts_[op.outputs[0]].producer = static_cast<OpId>(ops_.size());
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      TInfo& t = ts_[op.inputs[i]];
      t.roles |= mm ? (i == 0 ? kLhs : kRhs) : kPw;
      ++t.uses;
    }
    last_ = op.outputs[0];
    ops_.push_back(std::move(op));
  }

  void into(Problem& p) const {
    for (const TInfo& t : ts_) {
      p.widths.push_back(t.w);
      p.heights.push_back(t.h);
    }
    p.ops = ops_;
  }

 private:
  i64 side() { return square_ && d_.percent(85) ? base_ : d_.pick(l_.dims); }
  i64 kside() {
    if (square_ && kOk(base_) && d_.percent(85)) return base_;
    return d_.percent(60) ? d_.pick(l_.pow2) : d_.pick(l_.ks);
  }
  TensorId fresh(i64 h, i64 w) {
    ts_.push_back({h, w});
    return static_cast<TensorId>(ts_.size() - 1);
  }
  bool kOk(i64 k) const { return k <= l_.pow2.back() || std::find(l_.ks.begin(), l_.ks.end(), k) != l_.ks.end(); }

  // An existing tensor for `role` with the given height / width (0: any), not in `taken`, or -1
  // for a fresh one (weight `fresh_w`).
  TensorId existing(uint8_t role, i64 h, i64 w, const std::vector<TensorId>& taken, int fresh_w) {
    std::vector<std::pair<TensorId, int>> cand;
    int total = fresh_w;
    for (TensorId t = 0; t < static_cast<TensorId>(ts_.size()); ++t) {
      const TInfo& x = ts_[t];
      if ((h && x.h != h) || (w && x.w != w)) continue;
      if (std::find(taken.begin(), taken.end(), t) != taken.end()) continue;
      if (role == kLhs && !kOk(x.w)) continue;
      if (role == kRhs && !kOk(x.h)) continue;
      int wt = 1;
      if (x.producer >= 0 && x.uses == 0) wt += 6;
      if (t == last_) wt += 4;
      if (x.roles & ~role) {  // a new role: favoured, rare, or never
        if (b_.multi < 0) continue;
        wt = b_.multi > 0 ? wt + b_.multi : 1;
      }
      if (x.producer >= 0 && x.uses > 0) wt += b_.reread;
      if (role == kRhs && x.producer < 0 && (x.roles & kRhs)) wt += b_.share;
      cand.push_back({t, wt});
      total += wt;
    }
    i64 r = static_cast<i64>(d_.below(static_cast<uint64_t>(total)));
    for (auto [t, wt] : cand)
      if ((r -= wt) < 0) return t;
    return -1;
  }

  void matmulInputs(Op& op) {
    const int fw = ops_.empty() ? 1000 : 3;
    if (d_.percent(60)) {  // LHS first
      TensorId l = existing(kLhs, 0, 0, {}, ops_.empty() ? 1000 : 1);
      if (l < 0) l = fresh(side(), kside());
      TensorId r = existing(kRhs, ts_[l].w, 0, {l}, fw);
      if (r < 0) r = fresh(ts_[l].w, side());
      op.inputs = {l, r};
    } else {
      TensorId r = existing(kRhs, 0, 0, {}, ops_.empty() ? 1000 : 1);
      if (r < 0) r = fresh(kside(), side());
      TensorId l = existing(kLhs, 0, ts_[r].h, {r}, fw);
      if (l < 0) l = fresh(side(), ts_[r].h);
      op.inputs = {l, r};
    }
  }

  void pointwiseInputs(Op& op) {
    TensorId a = existing(kPw, 0, 0, {}, ops_.empty() ? 1000 : 1);
    if (a < 0) a = fresh(side(), side());
    op.inputs = {a};
    int arity = d_.percent(b_.join_pc) ? (d_.percent(70) ? 2 : 3) : 1;
    for (int i = 1; i < arity; ++i) {
      TensorId t = existing(kPw, ts_[a].h, ts_[a].w, op.inputs, ops_.empty() ? 1000 : 3);
      if (t < 0) t = fresh(ts_[a].h, ts_[a].w);
      op.inputs.push_back(t);
    }
  }

  Draw& d_;
  const Lists& l_;
  const Bias& b_;
  bool square_ = false;
  i64 base_ = 128;
  std::vector<TInfo> ts_;
  std::vector<Op> ops_;
  TensorId last_ = -1;
};

Theme drawTheme(Draw& d, const RandomSpec& s) {
  const int mr = std::clamp(s.multi_role_percent, 0, 100);
  const int r = static_cast<int>(d.below(100));
  if (r < mr) return Theme::MultiRole;
  static constexpr std::array<Theme, 7> rest{Theme::Residual, Theme::Diamond, Theme::SharedWeight, Theme::MmPwMm,
                                             Theme::PwToMm,   Theme::MmToMm,  Theme::Free};
  return rest[d.below(rest.size())];
}

int minOps(Theme t) {
  switch (t) {
    case Theme::Diamond:
    case Theme::MmPwMm: return 3;
    case Theme::Free: return 1;
    default: return 2;
  }
}

Bias biasOf(Theme t) {
  Bias b;
  switch (t) {
    case Theme::MultiRole: b.multi = 12, b.square_pc = 80; break;
    case Theme::Residual: b.reread = 8, b.join_pc = 60; break;
    case Theme::Diamond: b.reread = 6, b.multi = 4, b.join_pc = 70, b.square_pc = 70; break;
    case Theme::SharedWeight: b.share = 14, b.matmul_pc = 75; break;
    case Theme::MmPwMm: b.kinds = {1, 2, 1}; break;
    case Theme::PwToMm: b.kinds = {2, 1}; break;
    case Theme::MmToMm: b.kinds = {1, 1}; break;
    case Theme::Free: break;
  }
  return b;
}

bool hasTheme(const GraphFeatures& f, Theme t) {
  switch (t) {
    case Theme::MultiRole: return f.multi_role;
    case Theme::Residual: return f.residual;
    case Theme::Diamond: return f.diamond;
    case Theme::SharedWeight: return f.shared_weight;
    case Theme::MmPwMm: return f.mm_pw_mm;
    case Theme::PwToMm: return f.pw_to_mm;
    case Theme::MmToMm: return f.mm_to_mm;
    case Theme::Free: return true;
  }
  return true;
}

i64 drawListed(Draw& d, const std::vector<i64>& list, i64 lo, i64 hi) {
  i64 v = d.percent(70) ? d.pick(list) : d.between(lo, hi);
  return std::clamp(v, lo, hi);
}

// Capacity around the graph's thresholds (CapacityMarks): just above or below one tile's or one
// tile row's working set, everything fits, in between, or small; or exactly one tensor's size (a
// tensor as large as the fast memory: it fits alone but never beside an output tile).
i64 drawCapacity(Draw& d, const Problem& p) {
  const CapacityMarks mk = capacityMarks(p);
  auto near = [&](i64 x, bool above) {
    i64 delta = d.percent(50) ? d.between(0, 3) : d.between(0, std::max<i64>(1, x / 20));
    return above ? x + delta : x - 1 - delta;
  };
  i64 c = 0;
  switch (d.below(10)) {
    case 0:
    case 1: c = near(mk.tile, true); break;
    case 2:
    case 3: c = near(mk.tile, false); break;
    case 4: c = near(mk.row, true); break;
    case 5: c = near(mk.row, false); break;
    case 6: c = 2 * mk.total + mk.row; break;
    case 7: c = d.between(std::min(mk.tile, mk.row), std::max(mk.row, mk.total)); break;
    case 8: c = near(mk.tile / static_cast<i64>(2 + d.below(7)), d.percent(50)); break;
    default:
      if (d.percent(50)) {
        const TensorId t = static_cast<TensorId>(d.below(static_cast<uint64_t>(p.numTensors())));
        c = p.size(t);
      } else {
        c = d.between(4, mk.total + mk.row);
      }
      break;
  }
  return std::clamp<i64>(c, 4, kMaxCapacity);
}

Problem build(Draw& d, const RandomSpec& spec, const std::string& name) {
  const Lists l = listsOf(spec);
  const int lo = std::max(1, spec.min_ops), hi = std::max(lo, spec.max_ops);
  const Theme theme = drawTheme(d, spec);
  const bool aim = minOps(theme) <= hi;
  Bias bias = biasOf(aim ? theme : Theme::Free);
  if (theme != Theme::MultiRole && d.percent(75)) bias.multi = -1;  // keep the other motifs mostly single-role
  Problem p;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    int n = static_cast<int>(d.between(lo, hi));
    if (aim) n = std::max(n, minOps(theme));
    Builder b(d, l, bias);
    const int nk = static_cast<int>(bias.kinds.size());
    const int start = n >= nk ? static_cast<int>(d.below(static_cast<uint64_t>(n) - static_cast<uint64_t>(nk) + 1)) : 0;
    for (int i = 0; i < n; ++i) {
      const bool forced = i >= start && i - start < nk;
      b.addOp(forced ? bias.kinds[i - start] == 1 : d.percent(bias.matmul_pc));
    }
    p = Problem{};
    b.into(p);
    p.name = name;
    p.native = std::max<i64>(1, spec.native);
    p.bandwidth = drawListed(d, {5, 8, 10, 16, 20, 25, 32, 40, 50, 64, 100}, std::max<i64>(1, spec.min_bandwidth),
                             std::max(spec.min_bandwidth, spec.max_bandwidth));
    const i64 blo = std::max<i64>(0, spec.min_base_cost), bhi = std::max(blo, spec.max_base_cost);
    for (Op& op : p.ops)
      op.base_cost = drawListed(d, {100, 200, 300, 500, 800, 1000, 1500, 2000, 3000, 5000, 8000}, blo, bhi);
    p.capacity = kMaxCapacity;
    finalizeProblem(p, name);  // derived fields for the features and the capacity marks
    if (!aim || hasTheme(graphFeatures(p), theme)) break;
  }
  p.capacity = drawCapacity(d, p);
  finalizeProblem(p, name);
  return p;
}

}  // namespace

uint64_t below(std::mt19937_64& g, uint64_t n) {
  if (n <= 1) return 0;
  const uint64_t lim = UINT64_MAX - UINT64_MAX % n;  // a multiple of n: values below it are uniform mod n
  uint64_t x;
  do x = g();
  while (x >= lim);
  return x % n;
}

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

GraphFeatures graphFeatures(const Problem& p) {
  const int n = p.numOps();
  // reach[a][b]: op b is a (strict) descendant of op a.
  std::vector<std::vector<char>> reach(n, std::vector<char>(n, 0));
  for (int i = n; i-- > 0;) {
    const OpId a = p.topo[i];
    for (TensorId t : p.ops[a].outputs)
      for (OpId c : p.consumers[t]) {
        reach[a][c] = 1;
        for (int x = 0; x < n; ++x) reach[a][x] |= reach[c][x];
      }
  }
  GraphFeatures f;
  for (TensorId t = 0; t < p.numTensors(); ++t) {
    uint8_t roles = 0;
    int rhsReads = 0;
    for (OpId o : p.consumers[t]) {
      const Op& op = p.ops[o];
      if (op.type == OpType::Pointwise) roles |= kPw;
      else roles |= op.inputs[0] == t ? kLhs : kRhs;
      if (op.type == OpType::MatMul && op.inputs[1] == t) ++rhsReads;
    }
    if (roles & (roles - 1)) f.multi_role = true;
    if (p.producer[t] < 0 && rhsReads >= 2) f.shared_weight = true;
    const auto& cs = p.consumers[t];
    for (size_t i = 0; i < cs.size(); ++i)
      for (size_t j = 0; j < cs.size(); ++j) {
        const OpId a = cs[i], b = cs[j];
        if (a == b) continue;
        if (reach[a][b]) f.residual = true;
        if (a < b && !reach[a][b] && !reach[b][a])
          for (int c = 0; c < n; ++c) f.diamond = f.diamond || (reach[a][c] && reach[b][c]);
      }
  }
  for (const Op& op : p.ops)
    for (TensorId t : op.inputs) {
      const OpId pr = p.producer[t];
      if (pr < 0 || op.type != OpType::MatMul) continue;
      const Op& up = p.ops[pr];
      if (up.type == OpType::MatMul) f.mm_to_mm = true;
      if (up.type != OpType::Pointwise) continue;
      f.pw_to_mm = true;
      for (TensorId u : up.inputs)
        f.mm_pw_mm = f.mm_pw_mm || (p.producer[u] >= 0 && p.ops[p.producer[u]].type == OpType::MatMul);
    }
  return f;
}

CapacityMarks capacityMarks(const Problem& p) {
  CapacityMarks mk;
  const i64 N = p.native;
  for (TensorId t = 0; t < p.numTensors(); ++t) mk.total += p.size(t);
  for (const Op& op : p.ops) {
    const TensorId out = op.outputs[0];
    const i64 h = std::min(N, p.heights[out]), w = std::min(N, p.widths[out]);
    i64 tile = 0, row = 0;
    if (op.type == OpType::MatMul) {
      const i64 k = std::min(N, op.K);
      tile = h * k + k * w + h * w;
      row = h * op.K + k * w + h * w;
    } else {
      tile = row = static_cast<i64>(op.inputs.size() + op.outputs.size()) * h * w;
    }
    mk.tile = std::max(mk.tile, tile);
    mk.row = std::max(mk.row, row);
  }
  return mk;
}

Problem randomProblem(uint64_t seed, const RandomSpec& spec) {
  Draw d(seed);
  return build(d, spec, "random-" + std::to_string(seed));
}

std::string randomProblemJson(uint64_t seed, const RandomSpec& spec) {
  return problemToJson(randomProblem(seed, spec));
}

Problem problemFromBytes(const uint8_t* data, size_t size, const RandomSpec& spec) {
  try {
    Draw d(data, size);
    return build(d, spec, "bytes");
  } catch (...) {  // never throws: a one-op fallback
    Problem p;
    p.widths = {64, 64};
    p.heights = {64, 64};
    Op op;
    op.inputs = {0};
    op.outputs = {1};
    op.base_cost = 100;
    p.ops = {op};
    p.capacity = 1 << 20;
    p.bandwidth = 10;
    p.native = 128;
    p.name = "bytes-fallback";
    finalizeProblem(p, p.name);
    return p;
  }
}

}  // namespace mlsys::soundness
