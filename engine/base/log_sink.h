// Where a run's lines go (progress, warnings): a caller's sink (the library API, the Python
// module) or, without one, stderr. One call per complete line, without the newline; lines of
// one run never interleave (the callers emit whole lines under their own locks).
#pragma once
#include <functional>
#include <iostream>
#include <string>

namespace mlsys {

using LogSink = std::function<void(const std::string& line)>;

// Writes `line` to `sink`, or to stderr (with a newline) when the sink is empty.
inline void emitLine(const LogSink& sink, const std::string& line) {
  if (sink) sink(line);
  else std::cerr << line + "\n";
}

}  // namespace mlsys
