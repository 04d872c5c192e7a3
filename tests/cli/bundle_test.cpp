// The portable bundle (README "Running in a contest harness"): `cpack -G TGZ` of this build,
// unpacked into an empty directory and run with an empty environment, needs nothing from the
// machine but the C library and the C++ runtime, needs no symbol version newer than Ubuntu 22.04's,
// finds its shipped configs by bare name, and solves an instance validly.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/child_process.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace mlsys {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// Runs `cmd` with sh, stdout and stderr together.
test::RunResult shell(const std::string& cmd) {
  test::child::RunOpts o;
  o.err_to_out = true;
  return test::child::run({"sh", "-c", cmd}, o);
}

// The version as a comparable list of numbers ("2.35" -> {2, 35}).
std::vector<int> versionOf(const std::string& v) {
  std::vector<int> out;
  std::stringstream s(v);
  std::string part;
  while (std::getline(s, part, '.')) out.push_back(std::stoi(part));
  return out;
}

class Bundle : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (kSanitized || std::string(MLSYS_CPACK).empty()) return;
    dir_ = test::tempPath("bundle");
    fs::create_directories(dir_ + "/unpacked");
    fs::create_directories(dir_ + "/work");
    pack_ = shell("'" MLSYS_CPACK "' -G TGZ --config '" MLSYS_BINARY_DIR "/CPackConfig.cmake' -B '" + dir_ + "/pkg'");
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_ + "/pkg", ec))
      if (e.path().string().ends_with(".tar.gz")) archive_ = e.path().string();
    if (archive_.empty()) return;
    untar_ = shell("tar -xzf '" + archive_ + "' -C '" + dir_ + "/unpacked'");
    for (const auto& e : fs::directory_iterator(dir_ + "/unpacked")) root_ = e.path().string();
  }
  void SetUp() override {
    if (kSanitized) GTEST_SKIP() << "sanitizer build: the bundle is made from a release build";
    if (std::string(MLSYS_CPACK).empty()) GTEST_SKIP() << "cpack not found by CMake";
    ASSERT_EQ(pack_.exit_code, 0) << pack_.out;
    ASSERT_FALSE(archive_.empty()) << "cpack wrote no .tar.gz: " << pack_.out;
    ASSERT_EQ(untar_.exit_code, 0) << untar_.out;
    ASSERT_TRUE(fs::is_regular_file(root_ + "/bin/mlsys")) << "no bin/mlsys in " << archive_;
  }
  // Runs the bundled binary with an empty environment in the empty work directory.
  static test::RunResult bundled(const std::string& args) {
    return shell("cd '" + dir_ + "/work' && env -i '" + root_ + "/bin/mlsys' " + args);
  }

  static inline std::string dir_, archive_, root_;
  static inline test::RunResult pack_, untar_;
};

TEST_F(Bundle, ShipsTheLibrariesAndConfigs) {
  for (const char* f : {"lib/libtbb.so.12", "lib/libyaml-cpp.so.0.7", "lib/libtbbmalloc.so.2",
                        "share/mlsys/configs/contest.yaml", "share/mlsys/configs/default.yaml"})
    EXPECT_TRUE(fs::exists(root_ + "/" + f)) << f << " missing from " << archive_;
  auto d = shell("readelf -d '" + root_ + "/bin/mlsys'");
  ASSERT_EQ(d.exit_code, 0) << d.out;
  EXPECT_NE(d.out.find("(RPATH)              Library rpath: [$ORIGIN/../lib]"), std::string::npos) << d.out;
  EXPECT_EQ(d.out.find("RUNPATH"), std::string::npos) << d.out;
  // The C++ runtime is linked into the executable: it names neither libstdc++ nor libgcc_s.
  EXPECT_NE(d.out.find("Shared library: [libtbb.so.12]"), std::string::npos) << d.out;
  EXPECT_EQ(d.out.find("libstdc++"), std::string::npos) << d.out;
  EXPECT_EQ(d.out.find("libgcc_s"), std::string::npos) << d.out;
}

// Every library resolves inside the bundle, except the C library parts and the shared C++ runtime
// (libstdc++.so.6, libgcc_s.so.1) that the shipped libtbb, yaml-cpp and fmt were built against
// (bin/mlsys itself carries its runtime statically): Debian 12's libstdc++.so.6 requires
// GLIBC_2.36 and shipped it would break the bundle on Ubuntu 22.04. Also under an LD_LIBRARY_PATH
// pointing at the system's copies: DT_RPATH comes first.
TEST_F(Bundle, LddFindsNothingOutsideButTheSystemRuntime) {
  const std::regex system_part(
      R"(^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1)$)");
  for (std::string env : {"env -i", "env -i LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu"}) {
    auto l = shell(env + " ldd '" + root_ + "/bin/mlsys'");
    ASSERT_EQ(l.exit_code, 0) << l.out;
    EXPECT_EQ(l.out.find("not found"), std::string::npos) << l.out;
    std::stringstream lines(l.out);
    std::string line;
    std::set<std::string> inside;
    while (std::getline(lines, line)) {
      std::smatch m;
      // "\tNAME => PATH (0x...)" or "\tPATH (0x...)" (the loader, the vdso).
      if (!std::regex_search(line, m, std::regex(R"(^\s*(\S+)(?: => (\S+))? \(0x)"))) continue;
      std::string name = fs::path(m[1].str()).filename().string();
      std::string path = fs::path(m[2].matched ? m[2].str() : m[1].str()).lexically_normal().string();
      if (path.starts_with(root_ + "/lib/")) inside.insert(name);
      else
        EXPECT_TRUE(std::regex_match(name, system_part)) << name << " comes from outside the bundle (" << env << "):\n"
                                                         << l.out;
    }
    EXPECT_TRUE(inside.count("libtbb.so.12")) << l.out;
    EXPECT_TRUE(inside.count("libyaml-cpp.so.0.7")) << l.out;
  }
}

// Ubuntu 22.04 has glibc 2.35 and GCC 12's libstdc++ (GLIBCXX_3.4.30, CXXABI_1.3.13): no file of
// the bundle may need a newer symbol version.
TEST_F(Bundle, NeedsNoSymbolVersionNewerThanUbuntu2204) {
  const std::map<std::string, std::string> limit{{"GLIBC", "2.35"}, {"GLIBCXX", "3.4.30"}, {"CXXABI", "1.3.13"}};
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(root_)) {
    if (!e.is_regular_file() ||
        (e.path().parent_path().filename() != "bin" && e.path().parent_path().filename() != "lib"))
      continue;
    ++files;
    auto p = shell("objdump -p '" + e.path().string() + "'");
    ASSERT_EQ(p.exit_code, 0) << p.out;
    std::string refs = p.out.substr(std::min(p.out.find("Version References:"), p.out.size()));
    std::regex version(R"(\b(GLIBC|GLIBCXX|CXXABI)_([0-9][0-9.]*)\b)");
    for (auto it = std::sregex_iterator(refs.begin(), refs.end(), version); it != std::sregex_iterator(); ++it)
      EXPECT_LE(versionOf((*it)[2]), versionOf(limit.at((*it)[1]))) << e.path() << " needs " << (*it)[0];
  }
  EXPECT_GE(files, 4);  // bin/mlsys and at least libtbb, libtbbmalloc, libyaml-cpp
}

TEST_F(Bundle, FindsItsConfigsByBareName) {
  // The work directory has no contest.yaml: the bundle's share/mlsys/configs/contest.yaml is used.
  auto shipped = bundled("solve --print-config -c contest.yaml");
  ASSERT_EQ(shipped.exit_code, 0) << shipped.out;
  auto direct = test::runMlsys({"solve", "--print-config", "-c", test::sourceDir() + "/configs/contest.yaml"});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(shipped.out, direct.out);
  auto builtin = test::runMlsys({"solve", "--print-config"});
  EXPECT_NE(shipped.out, builtin.out) << "contest.yaml changes nothing: the comparison proves nothing";
  // A name that is in neither place, and a path with a directory part, are not looked up.
  auto missing = bundled("solve --print-config -c nosuch.yaml");
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  EXPECT_NE(missing.out.find("nosuch.yaml"), std::string::npos) << missing.out;
  auto with_dir = bundled("solve --print-config -c ./contest.yaml");
  EXPECT_EQ(with_dir.exit_code, 1) << with_dir.out;
  // A YAML syntax error: yaml-cpp (from lib/) throws, the binary reports it.
  test::writeText(dir_ + "/work/bad.yaml", "search: [\n");
  auto bad = bundled("solve --print-config -c bad.yaml");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("bad.yaml"), std::string::npos) << bad.out;
}

TEST_F(Bundle, SolvesAnInstanceValidly) {
  fs::copy_file(test::instancePath("generated/random-30.json"), dir_ + "/work/random-30.json",
                fs::copy_options::overwrite_existing);
  auto s = bundled("solve random-30.json out.json --seconds 2 --threads 2 -c contest.yaml --stats stats.json");
  ASSERT_EQ(s.exit_code, 0) << s.out;
  auto e = bundled("evaluate random-30.json out.json");
  EXPECT_EQ(e.exit_code, 0) << e.out;
  // And by the binary of the build tree, independently of the bundle.
  auto b = test::runMlsys({"evaluate", dir_ + "/work/random-30.json", dir_ + "/work/out.json"});
  EXPECT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(test::readText(dir_ + "/work/stats.json").find("\"best_latency\""), std::string::npos);
}

}  // namespace
}  // namespace mlsys
