// The engine's two parallel constructs, oneTBB in every build but ThreadSanitizer's.
//   parallelFor(first, last, body)  body(i) for every i in [first, last), in parallel; each call
//                                   writes only its own slots (no two calls share written data);
//   runConcurrently(n, body)        body(i) for i in [0, n) on n concurrent threads, until all return.
// Under -fsanitize=thread (the `tsan` preset): Debian's oneTBB is not instrumented, so TSan sees
// neither how it hands a task to a thread nor how the caller learns the task finished, and reports
// every hand-over as a race (in TBB's inlined headers as much as in ours). There, runConcurrently
// uses std::thread (whose start and join TSan understands), so the races that matter - between the
// search workers on the pool, the writer, the stats - are checked; parallelFor runs its calls in
// order on the calling thread: they share no written data by contract.
#pragma once

#include <cstddef>
#include <thread>
#include <vector>

#if !defined(__SANITIZE_THREAD__)
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_group.h>
#endif

namespace mlsys {

template <class Index, class Body>
void parallelFor(Index first, Index last, const Body& body) {
#if defined(__SANITIZE_THREAD__)
  for (Index i = first; i < last; ++i) body(i);
#else
  tbb::parallel_for(first, last, body);
#endif
}

template <class Body>
void runConcurrently(int n, const Body& body) {
#if defined(__SANITIZE_THREAD__)
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back([&body, i] { body(i); });
  for (auto& t : threads) t.join();
#else
  tbb::task_group tg;
  for (int i = 0; i < n; ++i) tg.run([&body, i] { body(i); });
  tg.wait();
#endif
}

}  // namespace mlsys
