// One run's request to stop, and the read-only view that long computations check.
//
// A StopSource belongs to one run (the CLI's `solve` owns it; a library caller owns its own). It
// is set from a signal handler, so it holds lock-free atomics only and every member it offers
// there (`request`, `resultExists`) is async-signal-safe. Nothing in cost/ or engine/ reads a
// process-wide flag: code that may run long is handed a StopToken (or a Deadline, which carries
// one) and checks it.
#pragma once
#include <atomic>

namespace mlsys {

class StopSource;

// A view of a StopSource; a default token never stops. Cheap to copy.
class StopToken {
 public:
  StopToken() = default;
  bool stopRequested() const noexcept;
  // The signal that asked for the stop (0: none, or stopped by other means).
  int signal() const noexcept;

 private:
  friend class StopSource;
  explicit StopToken(const StopSource* s) : src_(s) {}
  const StopSource* src_ = nullptr;
};

class StopSource {
 public:
  StopSource() = default;
  StopSource(const StopSource&) = delete;
  StopSource& operator=(const StopSource&) = delete;
  // Asks every holder of a token to stop; `signal` (when not 0) is remembered for the exit code.
  void request(int signal = 0) noexcept {
    if (signal != 0) signal_.store(signal, std::memory_order_relaxed);
    stop_.store(true, std::memory_order_release);
  }
  bool requested() const noexcept { return stop_.load(std::memory_order_relaxed); }
  int signal() const noexcept { return signal_.load(std::memory_order_relaxed); }
  // A result exists that a graceful stop would save (the output writer sets it after the first
  // schedule is on disk). Before that, a signal handler may end the process at once.
  void markResultExists() noexcept { result_.store(true, std::memory_order_release); }
  bool resultExists() const noexcept { return result_.load(std::memory_order_acquire); }
  // Back to the state of a new source (for a caller that runs again with the same source).
  void reset() noexcept {
    stop_.store(false);
    signal_.store(0);
    result_.store(false);
  }
  StopToken token() const noexcept { return StopToken(this); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> signal_{0};
  std::atomic<bool> result_{false};
  static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
                "set from a signal handler: the atomics must be lock-free");
};

inline bool StopToken::stopRequested() const noexcept { return src_ != nullptr && src_->requested(); }
inline int StopToken::signal() const noexcept { return src_ != nullptr ? src_->signal() : 0; }

}  // namespace mlsys
