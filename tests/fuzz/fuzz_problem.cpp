// libFuzzer target: bytes -> parseProblemText. Only InputError may escape the parser. A problem
// that parses must serialise (problemToJson) and parse back to the same problem.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlsys;
  if (fuzz::skipKnownBug(data, size)) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Problem p;
  try {
    p = parseProblemText(text, "fuzz");
  } catch (const InputError&) {
    return 0;
  }
  Problem q;
  try {
    q = parseProblemText(problemToJson(p), "roundtrip");
  } catch (const InputError& e) {
    fuzz::bug(std::string("problemToJson output does not parse back: ") + e.what());
  }
  if (!fuzz::sameProblem(p, q)) fuzz::bug("problemToJson round trip changed the problem");
  return 0;
}
