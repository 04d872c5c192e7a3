// Synthetic problem generator: realistic and adversarial graphs for tests, fuzz seeds and
// scaling benchmarks (`mlsys generate`).
//
// Families (size ~ number of ops; the generator rounds to whole blocks where a family has them):
//   transformer  blocks of attention (per head: Q/K^T/V projections, QK^T, softmax, AV, output
//                projection), a residual add, then an MLP (up, activation, down, residual add)
//   mixer        MLP-Mixer blocks: token-mixing MLP (weights on the left) and channel-mixing MLP,
//                with layer norms and residual adds
//   gemm-chain   a chain of MatMuls of varying widths with occasional Pointwise epilogues
//   cnn          1x1 convolutions (MatMuls over pixels x channels), Pointwise chains (norm,
//                activation) and skip connections, some of them long
//   random       random DAGs of MatMul/Pointwise with consistent shapes, fan-out and fan-in,
//                several components
//   odd-k        a MatMul chain whose reduction lengths K are not multiples of 128, with Pointwise
//                prologues and epilogues
//   shared-weight  branches x_i @ W_0 @ ... @ W_{L-1} (1-3 MatMuls) whose weights are shared by
//                every branch (at least one layer; the last layer may be private per branch),
//                summed by a Pointwise chain or tree, as in contest instance mlsys-2026-13; the
//                capacity lies between |x_i| and the shared weights (K x K, K <= 512)
// Every instance varies tensor sizes (multiples of 128 and not, e.g. 96, 200, 1000), bandwidth
// and capacity (some tight), may contain dead tensors and a shuffled op numbering, and always
// passes finalizeProblem (every op fits alone at [1,1,1]). The output depends only on
// (family, size, seed): std::mt19937_64 with portable integer/real mappings.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cost/model/problem.h"

namespace mlsys {

// The known family names, in a fixed order.
const std::vector<std::string>& generatorFamilies();

// Throws InputError for an unknown family (listing the known ones) or size < 1.
Problem generateProblem(const std::string& family, int size, uint64_t seed);

}  // namespace mlsys
