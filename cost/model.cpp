#include "cost/model.h"

#include "cost/types.h"

namespace mlsys {

std::string ModelOptions::describe() const {
  return std::string("matmul_compute=") +
         (matmul_compute == MatmulCompute::ReductionDepth ? "reduction_depth" : "native_depth") +
         " matmul_chains=" + (matmul_chains == MatmulChains::Literal ? "literal" : "reject") +
         " k_limit=" + (k_limit == KLimit::Native ? "native" : "reduction");
}

void ModelOptions::set(const std::string& key, const std::string& value) {
  if (key == "matmul_compute") {
    if (value == "reduction_depth") matmul_compute = MatmulCompute::ReductionDepth;
    else if (value == "native_depth") matmul_compute = MatmulCompute::NativeDepth;
    else
      throw InputError("model option matmul_compute: unknown value \"" + value +
                       "\" (expected reduction_depth or native_depth)");
    return;
  }
  if (key == "matmul_chains") {
    if (value == "literal") matmul_chains = MatmulChains::Literal;
    else if (value == "reject") matmul_chains = MatmulChains::Reject;
    else
      throw InputError("model option matmul_chains: unknown value \"" + value + "\" (expected literal or reject)");
    return;
  }
  if (key == "k_limit") {
    if (value == "native") k_limit = KLimit::Native;
    else if (value == "reduction") k_limit = KLimit::Reduction;
    else throw InputError("model option k_limit: unknown value \"" + value + "\" (expected native or reduction)");
    return;
  }
  throw InputError("unknown model option \"" + key + "\" (known: matmul_compute, matmul_chains, k_limit)");
}

void ModelOptions::setAssignment(const std::string& kv) {
  auto eq = kv.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("model option \"" + kv + "\": expected KEY=VALUE, e.g. matmul_compute=native_depth");
  set(kv.substr(0, eq), kv.substr(eq + 1));
}

}  // namespace mlsys
