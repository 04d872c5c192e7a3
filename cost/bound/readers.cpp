// Argument "readers": the cover serves each reader of an output that cannot be retained.
#include <algorithm>
#include <tuple>

#include "cost/bound/bound.h"
#include "cost/bound/internal.h"

namespace mlsys::bound_detail {

// Who serves each reader (availability, V5). An op o of the group whose one output t cannot be
// retained (V6, W1) and has two readers or more: the first subgraph to run a reader d needs t,
// so it runs o too, or loads t, written (c) by an earlier subgraph that runs o and no reader of
// t (t in O(S): a tensor consumed inside S is ephemeral, never written). So each pair (o, d) is
// served by a part holding o and d, or o and no reader (readers outside the group never share a
// subgraph with o: one bit for all of them). A bit per pair, beyond the ops' n bits, while
// n + bits <= maxBits; per part the bits it serves (a part holding o serves them whether o is
// forced there or not). Returns how many bits.
std::vector<OpId> servedReaders(const Problem& p, OpId o) {
  const Op& O = p.ops[o];
  if (O.outputs.size() != 1 || retainable(p, O.outputs[0])) return {};
  std::vector<OpId> readers = p.consumers[O.outputs[0]];
  std::sort(readers.begin(), readers.end());
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  if (readers.size() < 2) return {};
  return readers;
}

int readerMasks(const Problem& p, const std::vector<OpId>& ops, const std::vector<uint32_t>& parts, int maxBits,
                std::vector<uint32_t>& served) {
  const int n = static_cast<int>(ops.size());
  served.assign(parts.size(), 0);
  int bits = 0;
  for (int j = 0; j < n; ++j) {
    const std::vector<OpId> readers = servedReaders(p, ops[j]);
    if (readers.empty()) continue;
    uint32_t inside = 0;  // the readers in the group, as op bits
    bool outside = false;
    for (OpId d : readers) {
      const auto at = std::find(ops.begin(), ops.end(), d);
      if (at == ops.end()) outside = true;
      else inside |= 1u << (at - ops.begin());
    }
    const int mine = __builtin_popcount(inside) + (outside ? 1 : 0);
    if (n + bits + mine > maxBits) continue;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!(parts[i] >> j & 1)) continue;
      const uint32_t in = parts[i] & inside;
      int b = n + bits;  // this op's first bit
      for (int d = 0; d < n; ++d) {
        if (!(inside >> d & 1)) continue;
        if (in == 0 || (in >> d & 1)) served[i] |= 1u << b;
        ++b;
      }
      if (outside && in == 0) served[i] |= 1u << b;
    }
    bits += mine;
  }
  return bits;
}

}  // namespace mlsys::bound_detail
