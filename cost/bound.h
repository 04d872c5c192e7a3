// A lower bound on the latency of any valid schedule.
#pragma once
#include "cost/model.h"
#include "cost/problem.h"

namespace mlsys {

struct LowerBound {
  double compute = 0;  // sum over ops of base_cost per native tile of the smallest tensor downstream
                       // (the grid an op may be charged on; see bound.cpp)
  double traffic = 0;  // graph inputs loaded once + graph outputs stored once, / bandwidth
  double value() const { return compute > traffic ? compute : traffic; }
};

LowerBound lowerBound(const Problem& p, const ModelOptions& m);

}  // namespace mlsys
