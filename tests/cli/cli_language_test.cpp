// One command language (issue 15): -s is --seconds wherever it appears, generate's seed is --seed,
// an unknown command is named (exit 2), every --help lists every option and the one exit-code
// text, `--set KEY=VALUE` overrides the config like the file would, search.seconds/threads/seed in
// the YAML config (flag > --set > file > default), and after a signal the last line on stderr says
// the run was stopped by it. Every test runs the real binary (MLSYS_BIN).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/child_process.h"
#include "tests/test_util.h"

using namespace mlsys;

namespace {

std::string ex(const std::string& name) { return test::instancePath("examples/" + name); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string lastLine(const std::string& text) {
  size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

// From "Exit codes:" to the end of a --help text.
std::string exitCodesPart(const std::string& help) {
  size_t at = help.find("Exit codes:");
  return at == std::string::npos ? "" : help.substr(at);
}

// The header line of a solve run: "...; budget B s; threads T; seed S; ...".
std::string headerOf(const std::string& err) {
  size_t at = err.find("; budget ");
  if (at == std::string::npos) return "";
  return err.substr(at, err.find('\n', at) - at);
}

// A child running MLSYS_BIN with stdout to /dev/null and stderr to `err_path`; SIGKILLed and
// reaped on destruction if still running (tests/child_process.h).
using test::child::Child;
void spawnWithErr(Child& c, const std::vector<std::string>& args, const std::string& err_path) {
  test::child::spawn(c, args, test::child::errFile(err_path));
}

// Polls `path` until it contains `part` (true) or `seconds` pass (false).
bool waitForText(const std::string& path, const std::string& part, double seconds) {
  for (auto t0 = std::chrono::steady_clock::now();
       std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds;) {
    if (has(test::readText(path), part)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// ---- -s is --seconds --------------------------------------------------------------------------

TEST(CliLanguage, ShortSIsSecondsInEveryCommandWithABudget) {
  // solve: the budget the run states.
  auto r = test::runMlsys({"solve", ex("ex5.json"), test::tempPath("cl_s.json"), "-s", "0.7", "-t", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(headerOf(r.err), "; budget 0.7 s;")) << r.err;
  // bound: the time for exact covers; checked like solve's.
  r = test::runMlsys({"bound", ex("ex5.json"), "-s", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = test::runMlsys({"bound", ex("ex5.json"), "-s", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "--seconds must be positive")) << r.err;
  // Commands without a budget have no -s at all (it means nothing else anywhere).
  r = test::runMlsys({"evaluate", ex("ex5.json"), ex("ex5a.schedule.json"), "-s", "1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// --target and --stall-seconds take one positive number each (a usage error, exit 2, otherwise),
// and end the run with their stop reason in --stats.
TEST(CliLanguage, TargetAndStallSecondsAreCheckedAndNameTheirStop) {
  const std::string out = test::tempPath("cl_target.json"), stats = test::tempPath("cl_target.stats.json");
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{{"--target", "0"},
                                                                                   {"--target", "abc"},
                                                                                   {"--target", "1e3x"},
                                                                                   {"--stall-seconds", "-1"},
                                                                                   {"--stall-seconds", "nan"}}) {
    std::vector<std::string> args = {"solve", ex("ex5.json"), out, "-s", "1"};
    args.insert(args.end(), bad.begin(), bad.end());
    auto r = test::runMlsys(args);
    EXPECT_EQ(r.exit_code, 2) << bad[0] << " " << bad[1] << ": " << r.err;
    EXPECT_TRUE(has(r.err, bad[0])) << r.err;
  }
  auto r = test::runMlsys({"solve", ex("ex5.json"), out, "-s", "20", "-q", "--target", "1e12", "--stats", stats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(test::readText(stats), "\"stop_reason\": \"target\"")) << test::readText(stats);
}

TEST(CliLanguage, GenerateTakesItsSeedAsLongSeedOnly) {
  auto a = test::runMlsys({"generate", "--family", "random", "--size", "6", "--seed", "3"});
  auto b = test::runMlsys({"generate", "--family", "random", "--size", "6", "--seed", "4"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(a.out, b.out) << "--seed must reach the generator";
  for (std::vector<std::string> s : {std::vector<std::string>{"-s", "3"}, {"-s3"}, {"-s=3"}}) {
    std::vector<std::string> args = {"generate", "--family", "random", "--size", "6"};
    args.insert(args.end(), s.begin(), s.end());
    auto r = test::runMlsys(args);
    EXPECT_EQ(r.exit_code, 2) << s[0] << ": " << r.out << r.err;
    EXPECT_TRUE(has(r.err, "-s is --seconds")) << r.err;
    EXPECT_TRUE(has(r.err, "--seed")) << r.err;
  }
}

// ---- unknown commands -----------------------------------------------------------------------

TEST(CliLanguage, UnknownCommandIsNamedAndExitsTwo) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"frobnicate"}, {"evalute", ex("ex1.json"), ex("ex1a.schedule.json")}}) {
    auto r = test::runMlsys(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_TRUE(has(r.err, "unknown command '" + args[0] + "'")) << r.err;
    EXPECT_TRUE(has(r.err, "solve, evaluate, bound, report, generate")) << r.err;
  }
  // The contest form still takes a problem file first.
  auto r = test::runMlsys({ex("ex5.json"), test::tempPath("cl_contest.json"), "-s", "0.3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// ---- --help ------------------------------------------------------------------------------------

TEST(CliLanguage, EveryHelpListsEveryOptionAndTheExitCodes) {
  const std::map<std::string, std::vector<std::string>> options = {
      {"solve",
       {"-s, --seconds", "-t, --threads", "--seed", "--max-evals", "--target", "--stall-seconds", "--init",
        "-c, --config", "--set", "--model", "--stats", "--trace", "--exact", "--print-config", "-q, --quiet",
        "-v, --verbose", "-h, --help"}},
      {"evaluate", {"--json", "--walk", "-c, --config", "--set", "--model", "-h, --help"}},
      {"bound", {"--json", "-s, --seconds", "-c, --config", "--set", "--model", "-h, --help"}},
      {"report", {"-o, --output", "--trace", "-c, --config", "--set", "--model", "-h, --help"}},
      {"generate", {"-f, --family", "-n, --size", "--seed", "-o, --output", "-h, --help"}},
  };
  const std::string all = exitCodesPart(test::runMlsys({"--help"}).out);
  ASSERT_TRUE(has(all, "128+N")) << all;
  for (const std::string code : {"0 ", "1 ", "2 "}) EXPECT_TRUE(has(all, "\n  " + code)) << all;
  for (const auto& [cmd, opts] : options) {
    auto r = test::runMlsys({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    for (const auto& o : opts) EXPECT_TRUE(has(r.out, o)) << cmd << " --help lacks " << o << ":\n" << r.out;
    // Its own exit codes (issue 35): 0, 1 and 2 always; 128+N only where a signal is handled
    // (solve); no other command's name; its own examples.
    const std::string codes = exitCodesPart(r.out);
    for (const std::string code : {"0 ", "1 ", "2 "}) EXPECT_TRUE(has(codes, "\n  " + code)) << cmd << ":\n" << codes;
    EXPECT_EQ(has(codes, "128+N"), cmd == "solve") << cmd << ":\n" << codes;
    for (const auto& [other, unused] : options) {
      if (other == cmd) continue;
      EXPECT_FALSE(has(codes, other)) << cmd << "'s exit codes name " << other << ":\n" << codes;
    }
    EXPECT_TRUE(has(r.out, "Examples:\n  mlsys " + cmd + " ")) << cmd << " --help has no examples:\n" << r.out;
    // Only solve reads the search keys: the others show a model key in their --set example.
    if (cmd == "evaluate" || cmd == "bound" || cmd == "report") {
      EXPECT_FALSE(has(r.out, "sa.t0")) << cmd << ":\n" << r.out;
      EXPECT_TRUE(has(r.out, "model.k_limit=reduction")) << cmd << ":\n" << r.out;  // (the help wraps lines)
    }
  }
}

// ---- --set ---------------------------------------------------------------------------------------

TEST(CliLanguage, SetOverridesAnyKeyAndShowsInPrintConfig) {
  auto r = test::runMlsys({"solve", "--print-config", "--set", "sa.t0=0.001", "--set", "search.workers=[beam,sa]",
                           "--set", "sa.moves.merge=0", "--set", "lns.adaptive=false", "--set", "beam.width=9", "--set",
                           "beam.width=7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "t0: 0.001\n")) << r.out;
  EXPECT_TRUE(has(r.out, "workers: [beam, sa]\n")) << r.out << " (a list value must not be split at its comma)";
  EXPECT_TRUE(has(r.out, "merge: 0\n")) << r.out;
  EXPECT_TRUE(has(r.out, "adaptive: false\n")) << r.out;
  EXPECT_TRUE(has(r.out, "width: 7\n")) << r.out << " (the last --set of a key wins)";
  // Over a file: the file's key is replaced, the file's others stay.
  std::string cfg = test::tempPath("cl_set.yaml");
  test::writeText(cfg, "sa:\n  t0: 0.5\n  t1: 0.25\n");
  r = test::runMlsys({"solve", "--print-config", "-c", cfg, "--set", "sa.t0=0.125"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "t0: 0.125\n")) << r.out;
  EXPECT_TRUE(has(r.out, "t1: 0.25\n")) << r.out;
}

TEST(CliLanguage, SetIsCheckedLikeTheFile) {
  struct Case {
    std::string set;
    int code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"sa.t0=abc", 1, "--set sa.t0=abc: sa.t0: expected a number, got \"abc\""},
      {"sa.t0=2", 1, "--set sa.t0=2: sa.t0: value 2 is out of range [0, 1]"},
      {"beam.width=2.5", 1, "--set beam.width=2.5: beam.width: expected an integer, got \"2.5\""},
      {"sa.tempX=3", 1, "--set sa.tempX=3: sa.tempX: unknown key (known: t0, t1"},
      {"foo.bar=1", 1, "--set foo.bar=1: foo: unknown key (known: search, sa"},
      {"sa.moves.teleport=1", 1, "--set sa.moves.teleport=1: sa.moves.teleport: unknown key"},
      {"search.workers=[beam,genetic]", 1, "search.workers: unknown worker kind \"genetic\""},
      {"lns.window_ops_max=2", 1,
       "--set lns.window_ops_max=2: lns.window_ops_min: must not exceed lns.window_ops_max (2)"},
      {"search.seconds=0", 1, "--set search.seconds=0: search.seconds: value 0 is out of range"},
      {"sa.t0", 2, "--set sa.t0: expected KEY=VALUE"},
      {"=0.1", 2, "is not a key"},
  };
  for (const auto& c : cases) {
    auto r = test::runMlsys({"solve", "--print-config", "--set", c.set});
    EXPECT_EQ(r.exit_code, c.code) << c.set << ": " << r.err;
    EXPECT_TRUE(has(r.err, c.message)) << c.set << ":\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << c.set << ": nothing printed on an error";
  }
  // The same value in a file is the same error, naming the file and line instead.
  std::string cfg = test::tempPath("cl_bad.yaml");
  test::writeText(cfg, "sa:\n  t0: abc\n");
  auto r = test::runMlsys({"solve", "--print-config", "-c", cfg});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, "line 2: sa.t0: expected a number, got \"abc\"")) << r.err;
}

// The evaluations of one move kind in the table at the end of a run ("  granularity  1521 ..."); -1
// if absent.

// --set reaches the run itself, not only --print-config: the model (the header line) and the
// search settings (one annealing worker whose granularity move is off: the move table at the end
// shows no granularity evaluation, while the default portfolio evaluates it most often).
TEST(CliLanguage, SetReachesTheRun) {
  const std::vector<std::string> run = {"solve",
                                        test::instancePath("generated/random-30.json"),
                                        test::tempPath("cl_run.json"),
                                        "-s",
                                        "60",
                                        "-t",
                                        "1",
                                        "--max-evals",
                                        "3000"};
  auto base = test::runMlsys(run);
  ASSERT_EQ(base.exit_code, 0) << base.err;
  ASSERT_GT(test::movesEvaluated(base.err, "granularity"), 0) << base.err;
  std::vector<std::string> args = run;
  for (const char* kv : {"model.k_limit=reduction", "search.workers=[sa]", "sa.moves.granularity=0"})
    args.insert(args.end(), {"--set", kv});
  auto r = test::runMlsys(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(headerOf(r.err), "k_limit=reduction")) << r.err;
  EXPECT_EQ(test::movesEvaluated(r.err, "granularity"), 0)
      << "--set search.workers / sa.moves did not reach the search\n"
      << r.err;
  EXPECT_GT(test::movesEvaluated(r.err, "merge"), 0) << r.err;
}

// ---- search.seconds / threads / seed -----------------------------------------------------------

TEST(CliLanguage, ConfigHoldsSecondsThreadsAndSeedAndFlagsWin) {
  std::string cfg = test::tempPath("cl_run.yaml");
  test::writeText(cfg, "search:\n  seconds: 0.6\n  threads: 1\n  seed: 9\n");
  const std::string in = ex("ex5.json"), out = test::tempPath("cl_cfg.json");
  // The file alone.
  auto r = test::runMlsys({"solve", in, out, "-c", cfg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(headerOf(r.err), "; budget 0.6 s; threads 1; seed 9;")) << r.err;
  // --set over the file.
  r = test::runMlsys({"solve", in, out, "-c", cfg, "--set", "search.seed=6", "--set", "search.seconds=0.5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(headerOf(r.err), "; budget 0.5 s; threads 1; seed 6;")) << r.err;
  // Flags over --set and the file.
  r = test::runMlsys({"solve", in, out, "-c", cfg, "--set", "search.seed=6", "-s", "0.4", "-t", "2", "--seed", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(headerOf(r.err), "; budget 0.4 s; threads 2; seed 5;")) << r.err;
  // --print-config shows what the run uses; without any of them the built-in defaults.
  r = test::runMlsys({"solve", "--print-config", "-c", cfg, "--seed", "5"});
  EXPECT_TRUE(has(r.out, "seconds: 0.6\n  threads: 1\n  seed: 5\n")) << r.out;
  r = test::runMlsys({"solve", "--print-config"});
  EXPECT_TRUE(has(r.out, "seconds: auto\n  threads: 0\n  seed: 1\n")) << r.out;
  // ... and reads back as the same config.
  std::string printed = test::tempPath("cl_printed.yaml");
  test::writeText(printed, test::runMlsys({"solve", "--print-config", "-c", cfg, "--set", "search.seconds=auto"}).out);
  r = test::runMlsys({"solve", "--print-config", "-c", printed});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "seconds: auto\n  threads: 1\n  seed: 9\n")) << r.out;
}

// ---- signals -------------------------------------------------------------------------------------

TEST(CliLanguage, AfterSigtermTheLastLineSaysSo) {
  const std::string problem = test::tempPath("cl_sig_problem.json");
  auto g = test::runMlsys({"generate", "--family", "random", "--size", "400", "--seed", "2", "-o", problem});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  for (bool quiet : {false, true}) {
    const std::string err = test::tempPath(quiet ? "cl_sig_q.err" : "cl_sig.err");
    std::vector<std::string> args = {"solve", problem, test::tempPath("cl_sig_out.json"), "-s", "60", "-t", "2"};
    if (quiet) args.push_back("-q");
    Child c;
    spawnWithErr(c, args, err);
    // Mid-search: after the first improvement (with -q, a moment after the start).
    if (quiet) std::this_thread::sleep_for(std::chrono::seconds(2));
    else ASSERT_TRUE(waitForText(err, "found by", 30)) << test::readText(err);
    ::kill(c.pid, SIGTERM);
    ASSERT_TRUE(c.wait(60)) << "still running 60 s after SIGTERM";
    EXPECT_EQ(c.code(), 128 + SIGTERM);
    std::string text = test::readText(err);
    EXPECT_TRUE(has(lastLine(text), "stopped by signal 15 (Terminated); the best schedule is on disk")) << text;
    if (quiet) EXPECT_EQ(text.find('\n'), text.size() - 1) << "-q: the one line\n" << text;
    else EXPECT_TRUE(has(text, "done (signal)")) << text;
  }
}

TEST(CliLanguage, SigtermBeforeTheFirstScheduleSaysSo) {
  // The problem is a FIFO: the run is held while reading it, before any schedule exists.
  const std::string fifo = test::tempPath("cl_fifo.json"), err = test::tempPath("cl_fifo.err");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  Child c;
  spawnWithErr(c, {"solve", fifo, test::tempPath("cl_fifo_out.json"), "-s", "30"}, err);
  // A non-blocking open for writing succeeds once the run has opened the FIFO for reading (its
  // signal handlers are installed before).
  int w = -1;
  for (int i = 0; i < 2000 && w < 0; ++i) {
    w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (w < 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GE(w, 0) << "the run never opened its problem";
  ASSERT_EQ(::write(w, "{\"widths\": [128", 15), 15);
  ::kill(c.pid, SIGTERM);
  bool exited = c.wait(60);
  ::close(w);
  ASSERT_TRUE(exited);
  EXPECT_EQ(c.code(), 128 + SIGTERM);
  EXPECT_EQ(lastLine(test::readText(err)),
            "mlsys: stopped by signal 15 before the first schedule existed; nothing written");
  EXPECT_FALSE(std::filesystem::exists(test::tempPath("cl_fifo_out.json")));
}

}  // namespace
