// libFuzzer target: bytes split at the first "\n%%\n" into a problem and a schedule, then
// evaluateSchedule. Parsers may only throw InputError; the evaluator must not throw, crash, hang
// or overflow (UBSan), and its closed-form pricing must equal the step-by-step walk.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlsys;
  if (fuzz::skipKnownBug(data, size)) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const std::string kSep = "\n%%\n";
  const size_t cut = text.find(kSep);
  if (cut == std::string::npos) return 0;
  Problem p;
  Schedule s;
  try {
    p = parseProblemText(text.substr(0, cut), "fuzz-problem");
    s = parseScheduleText(text.substr(cut + kSep.size()), p, "fuzz-schedule");
  } catch (const InputError&) {
    return 0;
  }
  fuzz::evaluateAndCompare(p, s);
  return 0;
}
