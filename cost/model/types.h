// Basic identifiers and error types shared by every layer.
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace mlsys {

using OpId = int32_t;
using TensorId = int32_t;
using i64 = int64_t;
__extension__ typedef __int128 i128;           // exact latency numerators
__extension__ typedef unsigned __int128 u128;  // exact remainders (cost/pricing/step.h)

// Greatest common divisor of |a| and |b| (exact rational sums).
inline i128 gcd128(i128 a, i128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) {
    i128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// What an input file may cost: its size, and how long a read may wait (a FIFO with no writer
// yet, a slow pipe). Past either, readTextFile throws InputError.
struct ReadLimits {
  static constexpr double kDefaultMaxMb = 512;
  double max_bytes = kDefaultMaxMb * 1024 * 1024;           // --max-input-mb
  double give_up_at = 0;                                    // steady-clock seconds (time_since_epoch); 0: now + 10 s
  const char* raise_hint = "raise it with --max-input-mb";  // how a user lifts max_bytes
  std::function<bool()> stop;  // polled while parsing what was read: true ends it (ReadInterrupted)
};

// Bad input (problem, schedule, config): the message names the field and index.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reading was stopped by the caller's stop (a signal, a deadline) before it ended: no verdict on
// the input.
struct ReadInterrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace mlsys
