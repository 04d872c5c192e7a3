// Hardening of `mlsys solve` at the CLI level, the output file: a character device or a FIFO as
// output, a symlink planted at the temporary file's name, temporary files left by dead processes
// (the rest: hardening_cli_test.cpp). Every test runs the real binary (MLSYS_BIN) in a child
// process, with generous hang nets; children still running at the end are killed.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <rapidjson/document.h>

#include "cost/pricing/incremental.h"
#include "tests/child_process.h"
#include "tests/test_util.h"

using namespace mlsys;
using namespace mlsys::test::child;
namespace fs = std::filesystem;

// 2a. A character device as output (/dev/null's numbers) is written in place, never replaced.
TEST(HardeningCli, CharacterDeviceOutputIsNotReplaced) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mknod a character device";
  std::string d = freshDir("chardev"), p = ex5In(d), dev = d + "/null";
  if (::mknod(dev.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod " << dev << " c 1 3 failed: " << std::strerror(errno);
  int probe = ::open(dev.c_str(), O_WRONLY);
  if (probe < 0) GTEST_SKIP() << "the device node cannot be opened here (nodev mount?): " << std::strerror(errno);
  ::close(probe);
  Child c;
  spawn(c, {"solve", p, dev, "--seconds", "1"}, errFile(d + "/err.txt"));
  ASSERT_TRUE(c.wait(60)) << "solve --seconds 1 still running after 60 s";
  EXPECT_EQ(c.code(), 0) << c.describe() << "\n" << test::readText(d + "/err.txt");
  struct stat st {};
  ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << dev << " is no longer a character device";
  for (const auto& e : fs::directory_iterator(d))
    EXPECT_EQ(e.path().filename().string().find("null.tmp"), std::string::npos) << "left behind: " << e.path();
}

// 2b. A FIFO as output: written once, at the end, with the final best; still a FIFO afterwards.
TEST(HardeningCli, FifoOutputGetsExactlyOneSchedule) {
  std::string d = freshDir("fifo"), p = ex5In(d), fifo = d + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
  std::atomic<bool> stop{false};
  std::promise<void> opened;
  std::string got;
  bool reader_error = false;
  std::thread reader([&] {
    // Non-blocking open succeeds without a writer; poll() reports nothing until a writer has
    // connected, then POLLIN/POLLHUP; read() == 0 after that is the writer's EOF.
    int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    opened.set_value();
    if (fd < 0) {
      reader_error = true;
      return;
    }
    auto t0 = Clock::now();
    bool stopping = false;
    for (;;) {
      pollfd pf{fd, POLLIN, 0};
      int n = ::poll(&pf, 1, 50);
      if (n > 0) {
        char buf[65536];
        ssize_t k = ::read(fd, buf, sizeof buf);
        if (k > 0) {
          got.append(buf, static_cast<size_t>(k));
          continue;
        }
        // The writer closed (an open that wrote nothing, e.g. a probe, does not end the reading).
        if (k == 0 && (pf.revents & POLLHUP) && !got.empty()) break;
        if (k < 0 && errno != EAGAIN && errno != EINTR) break;
        if (k == 0) sleepFor(0.01);
      }
      if (stopping) break;
      if (stop.load() || secondsSince(t0) > 90) stopping = true;  // one more round to drain
    }
    ::close(fd);
  });
  opened.get_future().wait();
  Child c;
  spawn(c, {"solve", p, fifo, "--seconds", "1"}, errFile(d + "/err.txt"));
  bool exited = c.wait(60);
  if (!exited) c.killAndReap();
  stop.store(true);
  reader.join();
  ASSERT_FALSE(reader_error) << "cannot open the FIFO for reading";
  ASSERT_TRUE(exited) << "solve --seconds 1 into a FIFO still running after 60 s (blocked on the FIFO?)";
  EXPECT_EQ(c.code(), 0) << c.describe() << "\n" << test::readText(d + "/err.txt");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << fifo << " is no longer a FIFO";
  ASSERT_FALSE(got.empty()) << "the reader got nothing from the FIFO";
  rapidjson::Document doc;
  doc.Parse(got.c_str(), got.size());
  EXPECT_FALSE(doc.HasParseError()) << "the FIFO did not carry exactly one JSON document (" << got.size()
                                    << " bytes):\n"
                                    << got.substr(0, 2000);
  std::string copy = d + "/from_fifo.json";
  test::writeText(copy, got);
  std::string msg;
  EXPECT_EQ(evaluateExit(p, copy, &msg), 0) << msg;
}

// 3. A symlink planted at the temporary file's name is not followed.
TEST(HardeningCli, TemporaryFileDoesNotFollowASymlink) {
  std::string d = freshDir("symlink"), p = ex5In(d), out = d + "/out.json", victim = d + "/victim";
  test::writeText(victim, "precious");
  int gate[2];
  ASSERT_EQ(::pipe2(gate, O_CLOEXEC), 0);
  Child c;
  spawn(c, {"solve", p, out, "--seconds", "1", "-q"}, gated(d + "/err.txt", gate[0], gate[1]));
  ::close(gate[0]);
  std::string tmp = out + ".tmp." + std::to_string(c.pid);
  std::error_code ec;
  fs::create_symlink(victim, tmp, ec);
  ::close(gate[1]);  // release the child (EOF on the gate)
  ASSERT_FALSE(ec) << "cannot create " << tmp << ": " << ec.message();
  ASSERT_TRUE(c.wait(60)) << "solve --seconds 1 still running after 60 s";
  EXPECT_EQ(c.code(), 0) << c.describe() << "\n" << test::readText(d + "/err.txt");
  EXPECT_EQ(test::readText(victim), "precious") << "the symlinked victim was overwritten";
  std::string msg;
  EXPECT_EQ(evaluateExit(p, out, &msg), 0) << msg;
  struct stat st {};
  ASSERT_EQ(::lstat(out.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << out << " is not a regular file (the planted symlink was renamed over it?)";
}

// 4. Temporary files of dead processes are removed; those of live processes are left alone.
TEST(HardeningCli, StaleTemporaryFilesAreCleanedUp) {
  std::string d = freshDir("stale"), p = ex5In(d), out = d + "/out.json";
  pid_t dead = -1;
  {
    Child t;
    spawn(t, {}, {}, "/bin/true");
    ASSERT_TRUE(t.wait(60));
    dead = t.pid;
  }
  ASSERT_NE(::kill(dead, 0), 0) << "pid " << dead << " was reused already";
  // mkstemp's names (<out>.tmp.<pid>.XXXXXX) are this program's; <out>.tmp.<pid> without the
  // suffix may be a user's file and is kept (issue 36, item 12).
  std::string deadTmp = out + ".tmp." + std::to_string(dead) + ".a1B2c3",
              liveTmp = out + ".tmp." + std::to_string(::getpid()) + ".a1B2c3",
              userFile = out + ".tmp." + std::to_string(dead);
  test::writeText(deadTmp, "left by a dead process");
  test::writeText(liveTmp, "being written by a live process");
  test::writeText(userFile, "a user's file with a name of that shape");
  Child c;
  spawn(c, {"solve", p, out, "--seconds", "1"}, errFile(d + "/err.txt"));
  ASSERT_TRUE(c.wait(60)) << "solve --seconds 1 still running after 60 s";
  EXPECT_EQ(c.code(), 0) << c.describe() << "\n" << test::readText(d + "/err.txt");
  EXPECT_FALSE(fs::exists(deadTmp)) << deadTmp << " (pid " << dead << " has exited) was not removed";
  EXPECT_TRUE(fs::exists(liveTmp)) << liveTmp << " (pid " << ::getpid() << " is alive) was removed";
  EXPECT_TRUE(fs::exists(userFile)) << userFile << " (no mkstemp suffix: not this program's) was removed";
  if (fs::exists(liveTmp)) {
    EXPECT_EQ(test::readText(liveTmp), "being written by a live process");
  }
  EXPECT_EQ(evaluateExit(p, out), 0);
}
