// The bound's budget in CPU time of its thread (engine/base/thread_cpu_budget.h): it counts the
// CPU of the thread that made it, whoever asks, and the wall-clock cap holds whatever the CPU.
// Each thread burns CPU until its own CPU clock says so (no timing assumption about the machine).
#include "engine/base/thread_cpu_budget.h"

#include <gtest/gtest.h>

#include <ctime>
#include <future>
#include <memory>
#include <thread>

using namespace mlsys;

namespace {

double threadCpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Spins until this thread has used `seconds` more CPU time.
void burn(double seconds) {
  const double until = threadCpu() + seconds;
  volatile unsigned x = 1;
  while (threadCpu() < until)
    for (int i = 0; i < 10000; ++i) x = x * 1664525u + 1013904223u;
}

}  // namespace

TEST(ThreadCpuBudget, CountsTheCpuOfTheThreadThatMadeItWhoeverAsks) {
  std::unique_ptr<ThreadCpuBudget> budget;
  std::promise<void> burnt, asked;
  std::thread maker([&] {
    budget = std::make_unique<ThreadCpuBudget>(0.05, 0);
    EXPECT_FALSE(budget->spent(0.01));
    burn(0.1);  // the maker spends its budget
    burnt.set_value();
    asked.get_future().wait();  // alive while asked (the bound's thread is, while it polls)
  });
  burnt.get_future().wait();
  EXPECT_TRUE(budget->spent(0.02));  // asked from here, 5 ms of wall clock after the last read
  asked.set_value();
  maker.join();
}

// Once the thread has ended, Linux drops its clock (spent at once) while other kernels (the CI's
// sandbox) keep it frozen: either way the budget never outlives its wall-clock cap.
TEST(ThreadCpuBudget, AThreadThatHasEndedIsSpentByItsWallClockCap) {
  std::unique_ptr<ThreadCpuBudget> ended;
  std::thread([&] { ended = std::make_unique<ThreadCpuBudget>(0.5, 0); }).join();
  (void)ended->spent(0.01);  // whichever the kernel says, a read of an ended thread's clock is safe
  EXPECT_TRUE(ended->spent(1.01));
}

TEST(ThreadCpuBudget, AnotherThreadsCpuDoesNotCount) {
  ThreadCpuBudget budget(0.05, 0);  // made here; this thread stays idle
  std::thread other([] { burn(0.1); });
  other.join();
  EXPECT_FALSE(budget.spent(0.01));
  EXPECT_FALSE(budget.spent(0.09));  // inside the wall-clock cap (twice 0.05)
}

TEST(ThreadCpuBudget, TheWallClockCapHoldsWhateverTheCpu) {
  ThreadCpuBudget budget(10, 5);  // 10 s of CPU from wall-clock second 5: at most until 25
  EXPECT_FALSE(budget.spent(24.9));
  EXPECT_TRUE(budget.spent(25.1));
}
