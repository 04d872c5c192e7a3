// Child processes of the tests, the one place that forks: the real binary (MLSYS_BIN) or any
// program run with chosen stdout/stderr, a gate to hold it before exec, waits with time-outs,
// run() to run one to its end capturing stdout, stderr and the exit code (test::runMlsys and
// test::runCommand are built on it), and readers of what it wrote (schedule latencies, --trace
// rows). Used by test_util.cpp and the CLI tests (hardening*, cli_language, adversarial, bundle).
#pragma once
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <rapidjson/document.h>

#include "tests/test_util.h"

namespace mlsys::test::child {

namespace fs = std::filesystem;

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

inline void sleepFor(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// A fresh directory for one test (under the shared test temp dir).
inline std::string freshDir(const std::string& name) {
  static int counter = 0;
  std::string d = test::tempPath("hard_" + name + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::create_directories(d);
  return d;
}

// Example 5 of the spec (the small instance of tests/solve_test.cpp).
inline const char* kEx5 = R"({"widths":[128,128,128,128,128],"heights":[128,128,128,128,128],
    "inputs":[[0,1],[3,2]],"outputs":[[3],[4]],"base_costs":[2000,2000],"op_types":["MatMul","MatMul"],
    "fast_memory_capacity":45000,"slow_memory_bandwidth":10,"native_granularity":[128,128]})";

inline std::string ex5In(const std::string& dir) {
  std::string p = dir + "/ex5.json";
  test::writeText(p, kEx5);
  return p;
}

inline const char* kNoBench = "../shared/benchmarks (mlsys-2026-21.json) is absent: this test needs a contest instance";

// A child process running MLSYS_BIN (or another program). Killed (SIGKILL) and reaped on
// destruction if it is still running.
struct Child {
  pid_t pid = -1;
  Clock::time_point start;
  bool reaped = false;
  int status = 0;

  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() { killAndReap(); }

  // Waits at most timeout_s for the exit (without limit if infinite); true if it exited (status set).
  bool wait(double timeout_s) {
    if (reaped) return true;
    if (pid <= 0) {  // never started
      reaped = true;
      status = -1;
      return true;
    }
    if (timeout_s == std::numeric_limits<double>::infinity()) {
      pid_t r;
      while ((r = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
      }
      if (r != pid) status = -1;
      reaped = true;
      return true;
    }
    auto t0 = Clock::now();
    for (;;) {
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        reaped = true;
        return true;
      }
      if (r < 0 && errno != EINTR) {
        reaped = true;
        status = -1;
        return true;
      }
      if (secondsSince(t0) >= timeout_s) return false;
      sleepFor(0.005);
    }
  }
  bool running() {
    if (reaped) return false;
    return !wait(0);
  }
  void signal(int sig) {
    if (!reaped && pid > 0) ::kill(pid, sig);
  }
  void killAndReap() {
    if (pid > 0 && !reaped) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      reaped = true;
    }
  }
  // The exit code, or 1000 + N when killed by signal N.
  int code() const {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 1000 + WTERMSIG(status);
    return -1;
  }
  std::string describe() const {
    if (!reaped) return "still running";
    if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
      return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
             ")";
    return "status " + std::to_string(status);
  }
};

struct SpawnOpts {
  std::string out_file = "/dev/null";  // stdout
  std::string err_file = "/dev/null";  // stderr (ignored if err_fd >= 0)
  int err_fd = -1;                     // use this fd as stderr
  bool err_to_out = false;             // stderr to stdout's file (a shell's 2>&1; err_* ignored)
  int gate_fd = -1;                    // read end of a pipe: block until it is readable / closed
  std::vector<int> close_in_child;     // other fds to close in the child
};

inline SpawnOpts errFile(const std::string& path) {
  SpawnOpts o;
  o.err_file = path;
  return o;
}
inline SpawnOpts errFd(int fd) {
  SpawnOpts o;
  o.err_fd = fd;
  return o;
}
// stderr to `path`; the child waits until `gate_read` is readable or at EOF (the parent closes
// `gate_write`).
inline SpawnOpts gated(const std::string& path, int gate_read, int gate_write) {
  SpawnOpts o;
  o.err_file = path;
  o.gate_fd = gate_read;
  o.close_in_child = {gate_write};
  return o;
}

// Forks and execs `prog` (MLSYS_BIN by default; a path) with `args` (argv[0] excluded). SIGPIPE is
// reset to its default action and the signal mask cleared in the child, so that the test process'
// own dispositions do not leak.
inline void spawn(Child& c, const std::vector<std::string>& args, const SpawnOpts& o = {},
                  const char* prog = MLSYS_BIN) {
  std::vector<std::string> storage;
  storage.push_back(prog);
  for (const auto& a : args) storage.push_back(a);
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  c.start = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    // Child: only async-signal-safe calls.
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGHUP, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int fd : o.close_in_child) ::close(fd);
    if (o.gate_fd >= 0) {
      char b;
      while (::read(o.gate_fd, &b, 1) < 0 && errno == EINTR) {
      }
      ::close(o.gate_fd);
    }
    // The opened files are O_CLOEXEC; dup2 gives fds 0-2 without it.
    int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in >= 0) ::dup2(in, 0);
    int out = ::open(o.out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out >= 0) ::dup2(out, 1);
    if (o.err_to_out) {
      ::dup2(1, 2);
    } else if (o.err_fd >= 0) {
      ::dup2(o.err_fd, 2);
    } else {
      int err = ::open(o.err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (err >= 0) ::dup2(err, 2);
    }
    ::execv(prog, argv.data());
    ::_exit(127);
  }
  ASSERT_GT(pid, 0) << "fork failed: " << std::strerror(errno);
  c.pid = pid;
}

// `name` if it contains a '/', else the first executable `dir/name` of $PATH (as execvp looks it
// up; resolved here, before the fork, where allocating is safe); `name` itself if none is.
inline std::string findProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t at = 0;
  for (;;) {
    const size_t end = dirs.find(':', at);
    std::string dir = dirs.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (dir.empty()) dir = ".";
    const std::string cand = dir + "/" + name;
    if (::access(cand.c_str(), X_OK) == 0) return cand;
    if (end == std::string::npos) return name;
    at = end + 1;
  }
}

struct RunOpts {
  double limit_s = std::numeric_limits<double>::infinity();  // SIGKILLed after this long (timed_out)
  bool err_to_out = false;  // stderr into the stdout capture, in write order (a shell's 2>&1)
};

// What run() reports: exit_code is the exit status, or 128 + N when killed by signal N (as a
// shell reports it); -1 if the program could not be started.
struct Captured : test::RunResult {
  bool timed_out = false;  // killed at RunOpts::limit_s
  int status = 0;          // the raw wait status
};

// Runs argv (argv[0] a path, or a name looked up in PATH) to its end, stdin from /dev/null, stdout
// and stderr captured through files in the test temp dir.
inline Captured run(const std::vector<std::string>& argv, const RunOpts& o = {}) {
  Captured r;
  if (argv.empty()) return r;
  static int counter = 0;
  const std::string base = test::tempPath("run" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  SpawnOpts so;
  so.out_file = base + ".out";
  so.err_file = base + ".err";
  so.err_to_out = o.err_to_out;
  const std::string prog = findProgram(argv[0]);
  Child c;
  spawn(c, std::vector<std::string>(argv.begin() + 1, argv.end()), so, prog.c_str());
  if (c.pid <= 0) return r;
  if (!c.wait(o.limit_s)) {
    c.killAndReap();
    r.timed_out = true;
  }
  r.status = c.status;
  r.exit_code = WIFEXITED(c.status) ? WEXITSTATUS(c.status) : WIFSIGNALED(c.status) ? 128 + WTERMSIG(c.status) : -1;
  r.out = test::readText(so.out_file);
  if (!o.err_to_out) r.err = test::readText(so.err_file);
  std::error_code ec;
  fs::remove(so.out_file, ec);
  fs::remove(so.err_file, ec);
  return r;
}

// Sum of "subgraph_latencies" of a schedule text; nullopt if it does not parse.
inline std::optional<double> latencyOfText(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("subgraph_latencies")) return std::nullopt;
  const auto& a = d["subgraph_latencies"];
  if (!a.IsArray() || a.Empty()) return std::nullopt;
  double s = 0;
  for (const auto& v : a.GetArray()) {
    if (!v.IsNumber()) return std::nullopt;
    s += v.GetDouble();
  }
  return s;
}

inline std::optional<double> latencyOfFile(const std::string& path) {
  std::ifstream i(path, std::ios::binary);
  if (!i) return std::nullopt;
  std::ostringstream s;
  s << i.rdbuf();
  return latencyOfText(s.str());
}

inline std::string formatNum(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// a <= b up to the rounding of summing the per-subgraph latencies.
inline bool leq(double a, double b) { return a <= b + 1e-9 * std::max(1.0, std::fabs(b)); }
inline bool same(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }

struct TraceRow {
  double seconds;
  std::string worker;
  double latency;
};

// Reads `seconds,worker,latency`; `header` gets the first line.
inline std::vector<TraceRow> readTrace(const std::string& path, std::string* header = nullptr) {
  std::vector<TraceRow> rows;
  std::istringstream in(test::readText(path));
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (first) {
      if (header) *header = line;
      first = false;
      continue;
    }
    if (line.empty()) continue;
    size_t a = line.find(','), b = line.rfind(',');
    if (a == std::string::npos || b == a) continue;
    try {
      rows.push_back({std::stod(line.substr(0, a)), line.substr(a + 1, b - a - 1), std::stod(line.substr(b + 1))});
    } catch (...) {
    }
  }
  return rows;
}

// Resident set size of a process in kB (0 if unknown).
inline long rssKb(pid_t pid) {
  std::ifstream st("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(st, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

inline int evaluateExit(const std::string& problem, const std::string& sol, std::string* msg = nullptr) {
  auto r = test::runMlsys({"evaluate", problem, sol});
  if (msg) *msg = r.out + r.err;
  return r.exit_code;
}

}  // namespace mlsys::test::child
