#include "tests/test_util.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "tests/child_process.h"

namespace fs = std::filesystem;

namespace mlsys::test {

std::string sourceDir() { return MLSYS_SOURCE_DIR; }

std::string sharedBenchmarksDir() {
  fs::path d = fs::path(MLSYS_SHARED_DIR) / "benchmarks";
  return fs::is_directory(d) ? d.string() : std::string();
}

std::vector<std::string> sharedBenchmarks() {
  std::vector<std::string> v;
  std::string d = sharedBenchmarksDir();
  if (d.empty()) return v;
  for (const auto& e : fs::directory_iterator(d))
    if (e.path().extension() == ".json") v.push_back(e.path().string());
  std::sort(v.begin(), v.end());
  return v;
}

std::string sharedBenchmark(const std::string& stem) {
  for (const auto& f : sharedBenchmarks())
    if (fs::path(f).stem() == stem) return f;
  return "";
}

std::string instancePath(const std::string& rel) { return (fs::path(MLSYS_SOURCE_DIR) / "instances" / rel).string(); }

namespace {
// The test process' scratch directory, created on first use and removed with everything in it
// when the process ends (set MLSYS_KEEP_TEST_TMP=1 to keep it for a post-mortem). Only the
// process that created it removes it: forked children leave through _exit or exec.
struct ScratchDir {
  std::string path;
  pid_t owner = ::getpid();
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "mlsys-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    path = tmpl;
  }
  ~ScratchDir() {
    const char* keep = std::getenv("MLSYS_KEEP_TEST_TMP");
    if (::getpid() != owner || (keep && *keep && std::string(keep) != "0")) return;
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};
}  // namespace

std::string tempPath(const std::string& name) {
  static ScratchDir dir;
  return (fs::path(dir.path) / name).string();
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream o(path, std::ios::binary);
  o << text;
}

std::string readText(const std::string& path) {
  std::ifstream i(path, std::ios::binary);
  std::ostringstream s;
  s << i.rdbuf();
  return s.str();
}

RunResult runMlsys(const std::vector<std::string>& args, const std::vector<std::string>& prefix) {
  std::vector<std::string> argv = prefix;
  argv.push_back(MLSYS_BIN);
  argv.insert(argv.end(), args.begin(), args.end());
  return runCommand(argv);
}

RunResult runCommand(const std::vector<std::string>& argv) { return child::run(argv); }

long movesEvaluated(const std::string& err, const std::string& move) {
  size_t at = err.find("\n  " + move + " ");
  if (at == std::string::npos) return 0;
  // The count as printed for people: "1,234,567" (thousands separators).
  size_t i = at + 3 + move.size();
  while (i < err.size() && err[i] == ' ') ++i;
  long n = 0;
  for (; i < err.size() && (std::isdigit(static_cast<unsigned char>(err[i])) || err[i] == ','); ++i)
    if (err[i] != ',') n = 10 * n + (err[i] - '0');
  return n;
}

int significantDigits(const std::string& token) {
  std::string d;
  for (char c : token)
    if (c >= '0' && c <= '9') d += c;
  const size_t first = d.find_first_not_of('0');
  if (first == std::string::npos) return 0;
  d = d.substr(first);
  if (token.find('.') == std::string::npos)
    while (!d.empty() && d.back() == '0') d.pop_back();
  return static_cast<int>(d.size());
}

std::function<bool()> neverStop() {
  return [] { return false; };
}

Problem problemFromJson(const std::string& json) { return parseProblemText(json, "test"); }

ModelOptions reading(bool reduction) {
  ModelOptions m;
  if (reduction) m.k_limit = ModelOptions::KLimit::Reduction;
  return m;
}
Schedule scheduleFromJson(const std::string& json, const Problem& p) { return parseScheduleText(json, p, "test"); }

}  // namespace mlsys::test
