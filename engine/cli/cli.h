#pragma once
#include "engine/base/deadline.h"

namespace mlsys {

// Exit codes: 0 ok; 1 bad input, invalid schedule or runtime error; 2 usage; 128+N on signal N.
int runCli(int argc, char** argv, Deadline& deadline);

}  // namespace mlsys
