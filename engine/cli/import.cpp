// `mlsys import MODEL.onnx -o PROBLEM.json [options]`: the ONNX importer. It is the Python package
// mlsys_onnx (engine/onnx, on Debian's python3-onnx: ONNX's own reader and shape inference), run in
// place of this process with the arguments as given, so that its exit code, its messages and a
// Ctrl-C are the importer's own. engine/onnx/README.md gives the lowering rules.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cost/model/types.h"
#include "engine/cli/commands.h"

namespace mlsys {
namespace fs = std::filesystem;

namespace {

bool holdsImporter(const fs::path& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(dir / "mlsys_onnx" / "__main__.py", ec);
}

// Where mlsys_onnx is: $MLSYS_ONNX_DIR, else share/mlsys/python beside an installed bin/mlsys, else
// the source tree this binary was built from. Empty when none holds it.
fs::path importerDir() {
  if (const char* e = std::getenv("MLSYS_ONNX_DIR"); e && *e) return holdsImporter(e) ? fs::path(e) : fs::path();
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && holdsImporter(exe.parent_path().parent_path() / "share" / "mlsys" / "python"))
    return exe.parent_path().parent_path() / "share" / "mlsys" / "python";
  if (holdsImporter(MLSYS_ONNX_SOURCE_DIR)) return MLSYS_ONNX_SOURCE_DIR;
  return {};
}

// $MLSYS_PYTHON, else Debian's interpreter (the one python3-onnx is installed for), else python3
// on PATH.
std::string python() {
  if (const char* e = std::getenv("MLSYS_PYTHON"); e && *e) return e;
  if (::access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return "python3";
}

}  // namespace

int cmdImport(int argc, char** argv) {
  const fs::path dir = importerDir();
  if (dir.empty())
    throw InputError(std::string("import: the importer (the Python package mlsys_onnx) is not found") +
                     (std::getenv("MLSYS_ONNX_DIR") ? " in $MLSYS_ONNX_DIR" : "") +
                     ": set MLSYS_ONNX_DIR to the folder that holds mlsys_onnx/ (engine/onnx in the source tree)");
  std::string path = dir.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += std::string(":") + old;
  ::setenv("PYTHONPATH", path.c_str(), 1);
  ::setenv("MLSYS_IMPORT_PROG", "mlsys import", 1);  // the name its --help and messages use
  const std::string py = python();
  std::vector<std::string> args = {py, "-m", "mlsys_onnx"};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  std::signal(SIGPIPE, SIG_DFL);  // main() ignores it for the search; the importer gets the default
  std::fflush(stdout);
  std::fflush(stderr);
  ::execvp(py.c_str(), cargs.data());
  const int err = errno;
  std::signal(SIGPIPE, SIG_IGN);
  throw InputError("import: cannot run '" + py + "': " + std::strerror(err) +
                   " (set MLSYS_PYTHON to a Python 3 that has Debian's python3-onnx)");
}

}  // namespace mlsys
