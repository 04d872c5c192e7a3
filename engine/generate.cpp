#include <iostream>

#include "engine/commands.h"

namespace mlsys {

int cmdGenerate(int, char**) {
  std::cerr << "mlsys generate: not implemented yet\n";
  return 1;
}

}  // namespace mlsys
