// An independent generator of small random problems for soundness tests (tests/soundness/README.md).
// It shares nothing with `mlsys generate` (engine/generate/): its own shapes, motifs and
// capacities, drawn from std::mt19937_64 through its own integer helper (deterministic on every
// platform), or from a byte string (problemFromBytes, for a libFuzzer target).
#pragma once
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cost/model/problem.h"

namespace mlsys::soundness {

struct RandomSpec {
  int min_ops = 1, max_ops = 6;
  // Tensor widths and heights are drawn from this list (those <= max_dim).
  std::vector<i64> dims = {64, 96, 128, 200, 256, 384, 512, 1000, 1024, 2048};
  i64 max_k = 4096;  // MatMul reduction lengths K: 64..max_k (the dims list and powers of two)
  i64 max_dim = 0;   // > 0: every tensor dimension, K included, is at most this (keeps brute force cheap)
  i64 min_bandwidth = 5, max_bandwidth = 100;
  i64 min_base_cost = 100, max_base_cost = 8000;
  i64 native = 128;  // native_granularity [native, native]
  // Share of graphs whose motif is one tensor read by 2-4 ops in different roles.
  int multi_role_percent = 40;
};

// Uniform in [0, n) from g (0 when n <= 1), by rejection: the same numbers on every platform
// (std::uniform_int_distribution's are not).
uint64_t below(std::mt19937_64& g, uint64_t n);
// splitmix64's finaliser: a well-mixed 64-bit hash (seeds made of several parts).
uint64_t mix64(uint64_t x);

// A validated problem (finalizeProblem), named "random-<seed>". Same seed and spec, same problem.
Problem randomProblem(uint64_t seed, const RandomSpec& spec = {});
// The same problem in the contest JSON format (problemToJson).
std::string randomProblemJson(uint64_t seed, const RandomSpec& spec = {});
// Every choice is read from the bytes (zeros once they run out). Never throws: an unusable spec
// or byte string gives a small valid fallback problem.
Problem problemFromBytes(const uint8_t* data, size_t size, const RandomSpec& spec = {});

// The motifs of a graph, as the generator aims for them and the tests count them.
struct GraphFeatures {
  bool multi_role = false;     // one tensor read in two or more roles (LHS, RHS, Pointwise input)
  bool residual = false;       // a tensor read by op a and again by a descendant of a
  bool diamond = false;        // a tensor read by two unrelated ops whose outputs meet again later
  bool shared_weight = false;  // a graph input read as RHS by two or more MatMuls
  bool mm_pw_mm = false;       // MatMul -> Pointwise -> MatMul
  bool pw_to_mm = false;       // a Pointwise output is a MatMul operand
  bool mm_to_mm = false;       // a MatMul output is a MatMul operand
};
GraphFeatures graphFeatures(const Problem& p);

// Capacity thresholds of a graph at native granularity N: the largest one-op working set of one
// N x N tile (inputs' tiles or k-strips plus the output tile), of one tile row (the LHS row band
// h x K plus the RHS strip and the output tile), and the sum of all tensor sizes.
struct CapacityMarks {
  i64 tile = 0, row = 0, total = 0;
};
CapacityMarks capacityMarks(const Problem& p);

}  // namespace mlsys::soundness
