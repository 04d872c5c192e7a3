// Shared helpers for the libFuzzer targets: the only exception a parser may throw is
// mlsys::InputError; anything else (another exception, a crash, UB) is a bug.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "cost/model/problem.h"
#include "cost/model/schedule.h"
#include "cost/pricing/evaluator.h"

namespace mlsys::fuzz {

[[noreturn]] inline void bug(const std::string& what) {
  std::fprintf(stderr, "FUZZ BUG: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Known, reported bug (tests/fuzz/crashes/README.md): rapidjson 1.1.0 with
// kParseFullPrecisionFlag reads out of bounds in StrtodDiyFp on long number literals with a small
// decimal exponent, e.g. 0.000...0001 (350 zeros), 0.00000000000000000000000000000012e-326 or
// 50000000075188293634.7387000...000E-000382 or 0.0000080721100500516772e-00000000328. Until
// cost/model/json_util.cpp guards against it, the harnesses skip inputs with a number-like token of
// more than 40 characters, a '.' followed by 16+ zeros, or an exponent of -250 or below, so that
// fuzzing goes on past it; MLSYS_FUZZ_KNOWN_BUGS=1 disables the skip.
inline bool skipKnownBug(const uint8_t* data, size_t size) {
  static const bool off = [] {
    const char* e = std::getenv("MLSYS_FUZZ_KNOWN_BUGS");
    return e && *e == '1';
  }();
  if (off) return false;
  auto numChar = [](uint8_t c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
  };
  size_t i = 0;
  while (i < size) {
    if (!numChar(data[i])) {
      ++i;
      continue;
    }
    size_t j = i, zeros = 0;
    bool afterDot = false;
    for (; j < size && numChar(data[j]); ++j) {
      if ((data[j] == 'e' || data[j] == 'E') && j + 1 < size && data[j + 1] == '-') {
        long exp = 0;
        for (size_t k = j + 2; k < size && data[k] >= '0' && data[k] <= '9' && exp < 100000; ++k)
          exp = exp * 10 + (data[k] - '0');
        if (exp >= 250) return true;
      }
      if (data[j] == '.') {
        afterDot = true;
        zeros = 0;
      } else if (afterDot && data[j] == '0') {
        if (++zeros >= 16) return true;
      } else afterDot = false;
    }
    if (j - i > 40) return true;
    i = j;
  }
  return false;
}

// Field-by-field equality of the parsed parts of two problems (names may differ).
inline bool sameProblem(const Problem& a, const Problem& b) {
  if (a.widths != b.widths || a.heights != b.heights || a.capacity != b.capacity || a.bandwidth != b.bandwidth ||
      a.native != b.native || a.ops.size() != b.ops.size())
    return false;
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const Op &x = a.ops[i], &y = b.ops[i];
    if (x.type != y.type || x.inputs != y.inputs || x.outputs != y.outputs || x.base_cost != y.base_cost || x.K != y.K)
      return false;
  }
  return a.topo == b.topo && a.producer == b.producer;
}

// Steps the evaluator would walk for `s`: `all` with CostMethod::Walk, `auto_walk` with
// CostMethod::Auto (which walks only subgraphs whose plan has fast_ok == false, i.e. a tensor
// with two slice templates that coincide in some steps only, and prices the rest by step
// classes). Long doubles, so that huge grids cannot overflow.
struct WalkSteps {
  long double all = 0, auto_walk = 0;
};
inline WalkSteps walkSteps(const Problem& p, const Schedule& s, const ModelOptions& m) {
  static const std::vector<TensorId> kNone;
  WalkSteps w;
  for (size_t i = 0; i < s.subgraphs.size(); ++i) {
    const auto& sg = s.subgraphs[i];
    if (sg.ops.empty()) continue;
    SubgraphPlan pl = planSubgraph(p, m, sg.ops, sg.gran, i ? s.subgraphs[i - 1].retain : kNone, sg.retain);
    if (!pl.valid) continue;
    long double n =
        static_cast<long double>(pl.ntw) * static_cast<long double>(pl.nth) * static_cast<long double>(pl.nk);
    w.all += n;
    if (!pl.fast_ok) w.auto_walk += n;
  }
  return w;
}

// Bound on walked steps per evaluation (MLSYS_FUZZ_MAX_WALK overrides). With
// MLSYS_FUZZ_STRICT_WALK=1 an input that would make the default evaluator walk more steps than
// that is reported as a bug (a potential hang of `mlsys evaluate`); by default it is skipped.
inline long double maxWalk() {
  static long double v = [] {
    const char* e = std::getenv("MLSYS_FUZZ_MAX_WALK");
    return e ? std::strtold(e, nullptr) : 2e6L;
  }();
  return v;
}
inline bool strictWalk() {
  static bool v = [] {
    const char* e = std::getenv("MLSYS_FUZZ_STRICT_WALK");
    return e && *e == '1';
  }();
  return v;
}

// Evaluates `s` with the default method and, when affordable, with the oracle walk too; the two
// must agree exactly (validity, rule, each subgraph's rational latency, steps and peak).
inline void evaluateAndCompare(const Problem& p, const Schedule& s) {
  for (int mo = 0; mo < 2; ++mo) {
    ModelOptions m;
    if (mo) m.matmul_compute = ModelOptions::MatmulCompute::NativeDepth;
    WalkSteps ws = walkSteps(p, s, m);
    if (ws.auto_walk > maxWalk()) {
      if (strictWalk())
        bug("the default evaluator would walk " + std::to_string(static_cast<double>(ws.auto_walk)) + " steps");
      continue;
    }
    Evaluation a = evaluateSchedule(p, s, m, CostMethod::Auto);
    if (a.valid && !(a.total >= 0)) bug("valid schedule with a negative or NaN total");
    for (const auto& r : a.subgraphs)
      if (r.cost.valid && (r.cost.den <= 0 || r.cost.num < 0)) bug("negative latency numerator or denominator");
    if (ws.all > maxWalk()) continue;
    Evaluation b = evaluateSchedule(p, s, m, CostMethod::Walk);
    if (a.valid != b.valid || a.rule != b.rule || a.subgraphs.size() != b.subgraphs.size())
      bug(std::string("Auto and Walk disagree on validity: ") + ruleName(a.rule) + " '" + a.reason + "' vs " +
          ruleName(b.rule) + " '" + b.reason + "'");
    for (size_t i = 0; i < a.subgraphs.size(); ++i) {
      const auto &x = a.subgraphs[i].cost, &y = b.subgraphs[i].cost;
      if (x.valid != y.valid) bug("Auto and Walk disagree on subgraph " + std::to_string(i) + " validity");
      if (!x.valid) continue;
      if (x.num != y.num || x.den != y.den || x.peak_ws != y.peak_ws || x.steps != y.steps)
        bug("Auto and Walk disagree on subgraph " + std::to_string(i) + ": latency " + std::to_string(x.latency) +
            " vs " + std::to_string(y.latency) + ", peak " + std::to_string(x.peak_ws) + " vs " +
            std::to_string(y.peak_ws));
    }
  }
}

}  // namespace mlsys::fuzz
