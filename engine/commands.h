// Sub-commands implemented outside cli.cpp. Each takes the arguments after the command name
// (argv[0] is the command) and returns the exit code; bad input throws InputError.
#pragma once

namespace mlsys {

int cmdReport(int argc, char** argv);    // engine/report.cpp
int cmdGenerate(int argc, char** argv);  // engine/generate.cpp

}  // namespace mlsys
