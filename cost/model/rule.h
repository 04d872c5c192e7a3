// The validity rules a schedule or a proposed change can violate: the spec's (section 3, V1-V11;
// E2, E3 and A-6 from sections 4, 8 and 11) and the few the program adds (chains, range, and
// those only the search uses). One table (rule.cpp) holds each rule's printed name, a one-line
// summary and whether a granularity change can fix it.
#pragma once
#include <cstdint>
#include <iosfwd>

namespace mlsys {

enum class Rule : uint8_t {
  None,         // ""             valid
  V1,           // "V1"           format
  V2,           // "V2"           coverage
  V3,           // "V3"           order
  V4,           // "V4"           connectivity
  V5,           // "V5"           availability
  V6,           // "V6"           retention
  V7,           // "V7"           graph outputs
  V8,           // "V8"           granularity
  V9,           // "V9"           fusion under split-K
  V10,          // "V10"          traversal order
  V11,          // "V11"          capacity
  E2,           // "E2"           k-loop
  E3,           // "E3"           required regions
  A6,           // "A-6"          output shapes (decision 7)
  Chains,       // "chains"       MatMul chains under matmul_chains=reject (decision 3)
  Range,        // "range"        beyond exact pricing
  WalkLimit,    // "walk-limit"   search only: the step walk would be too long
  OrderSize,    // "order-size"   search only: a non-raster order too long to write
  Interrupted,  // "interrupted"  the evaluation was abandoned on a signal
  Full,         // "full"         search only: the full evaluator rejects the changed schedule
};

// The name printed in messages and JSON ("V8", "A-6", "chains"; "" for Rule::None).
const char* ruleName(Rule r);
// What the rule requires, in one line.
const char* ruleSummary(Rule r);
// Whether another granularity can make valid a subgraph that violates r (false for order,
// connectivity, retention, output shapes, chains: they depend on the ops and retained sets).
bool granularityCanFix(Rule r);

std::ostream& operator<<(std::ostream& os, Rule r);  // prints ruleName(r)

}  // namespace mlsys
