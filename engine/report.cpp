#include <iostream>

#include "engine/commands.h"

namespace mlsys {

int cmdReport(int, char**) {
  std::cerr << "mlsys report: not implemented yet\n";
  return 1;
}

}  // namespace mlsys
