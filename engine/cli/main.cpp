// mlsys: schedule search for the MLSys 2026 graph-scheduling problem.
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "engine/base/deadline.h"
#include "engine/cli/cli.h"

int main(int argc, char** argv) {
  // First thing: the budget covers loading, parsing, search and writing, from the process start.
  // The process's one stop source: `solve` routes SIGTERM/SIGINT/SIGHUP to it (cli.cpp, onSignal).
  static mlsys::StopSource stop;
  mlsys::Deadline deadline = mlsys::Deadline::sinceProcessStart(&stop);
  // A closed stdout/stderr (`... 2>&1 | head -c 10`) must not kill a search: writes fail with EPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  int code = mlsys::runCli(argc, argv, deadline);
  // Everything is written and flushed; skip the destructors of large caches (budget overruns).
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}
