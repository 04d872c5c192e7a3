// Model options for the spec's open ambiguities (../shared/spec/cost-model.md section 8).
#pragma once
#include <array>
#include <string>

namespace mlsys {

struct ModelOptions {
  // MatMul compute per k-step is base_cost*|k_j|/K (reduction_depth, default) or
  // base_cost*|k_j|/N (native_depth).
  enum class MatmulCompute : unsigned char { ReductionDepth, NativeDepth };
  MatmulCompute matmul_compute = MatmulCompute::ReductionDepth;

  // Decision 3: a chain of three or more MatMuls in one subgraph is priced literally (literal,
  // default; the evaluator warns that the price is likely optimistic) or rejected (reject: rule
  // "chains", so the search never uses one).
  enum class MatmulChains : unsigned char { Literal, Reject };
  MatmulChains matmul_chains = MatmulChains::Literal;

  // V8 (issue 13): k <= N (native, default: the spec), or k up to the reduction length K of the
  // subgraph's MatMuls (reduction: a permissive grader's reading; invalid under the spec).
  enum class KLimit : unsigned char { Native, Reduction };
  KLimit k_limit = KLimit::Native;

  // "matmul_compute=reduction_depth matmul_chains=literal k_limit=native"
  std::string describe() const;
  // Sets KEY=VALUE; throws InputError naming the key and the accepted values.
  void set(const std::string& key, const std::string& value);
  void setAssignment(const std::string& kv);  // "KEY=VALUE"
  // The name of KEY's current value ("native"); throws InputError for an unknown key.
  std::string value(const std::string& key) const;
  bool operator==(const ModelOptions&) const = default;

  // The one name table of the options: each key, and its values' names in enum order (index =
  // the enum's value). describe(), set(), value(), the config's model.* keys and the CLI's help
  // all read it.
  struct Option {
    const char* key;
    std::array<const char*, 2> values;
  };
  static constexpr std::array<Option, 3> kOptions{{
      {"matmul_compute", {"reduction_depth", "native_depth"}},
      {"matmul_chains", {"literal", "reject"}},
      {"k_limit", {"native", "reduction"}},
  }};
  // "matmul_compute=reduction_depth|native_depth, matmul_chains=literal|reject, ..."
  static std::string choicesText();

 private:
  int index(size_t option) const;
  void setIndex(size_t option, int value);
};

}  // namespace mlsys
