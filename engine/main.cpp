// mlsys: schedule search for the MLSys 2026 graph-scheduling problem.
#include "engine/cli.h"
#include "engine/deadline.h"

int main(int argc, char** argv) {
  mlsys::Deadline deadline;  // first thing: the budget covers parsing, search and writing
  return mlsys::runCli(argc, argv, deadline);
}
