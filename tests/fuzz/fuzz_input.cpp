// libFuzzer target: the file-reading path (readTextFile, parseProblemFile, parseScheduleFile) with
// the input shapes of issue 36: regular files, FIFOs fed by a writer thread (in chunks, closing
// early, stalling, or never opening), anonymous pipes read through /proc/self/fd/N, character
// devices, missing paths and directories, under small size limits and waits of a few ms.
//
// Input layout (a 4-byte header, an optional file name, then the content):
//   byte 0  shape (mod kShapes, see enum Shape)
//   byte 1  size limit: 255 = the default ReadLimits::max_bytes (512 MiB), else 16 * b (0..4064)
//   byte 2  aux: writer chunk size (aux + 1 if aux < 8, else 16 * aux; at least 1/64 of the
//           content), early-close point or wait in ms (per shape, see enum Shape)
//   byte 3  flags: bit 0 a file name follows (byte 4 = its length & 31, then the bytes, '/' and
//           NUL turned into '_'; fixed paths such as /dev/zero are reached through a symlink of
//           that name); bit 1 also parse the content as a schedule (against a fixed problem);
//           bit 2 the writer yields between chunks
//   rest    the content
//
// Checks (fuzz::bug on violation): only InputError escapes; content within the limit and fully
// written comes back byte for byte; content over the limit gives "over the input limit"; a FIFO
// without writer, or whose writer stalls, gives a "within the time limit" error close to the
// deadline; error messages hold no raw byte < 0x20 but '\n' and are at most kMaxMessage bytes
// (two known bugs excused, see excuseKnownBugs); parse*Text and parse*File agree on a regular
// file; no file descriptor leaks; every temporary file is removed (a per-process directory).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "cost/model/json_util.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_writers.h"

namespace {

using namespace mlsys;

enum Shape : uint8_t {
  kRegular,         // regular file holding the content
  kRegularOver,     // regular file, limit forced below its size (b % size)
  kSymlink,         // symlink to a regular file
  kFifoFull,        // FIFO; the writer writes everything in chunks (aux: chunk size) and closes
  kFifoEarlyClose,  // FIFO; the writer writes a prefix (aux/255 of the content) and closes
  kFifoNoWriter,    // FIFO nobody opens: "no data" after 1 + aux % 8 ms
  kFifoStall,       // FIFO; the writer writes a prefix and holds it open: times out after 1 + aux % 8 ms
  kPipe,            // anonymous pipe read as /proc/self/fd/N; a writer thread writes in chunks and closes
  kPipeClosed,      // anonymous pipe filled and closed before the read (like `mlsys evaluate <(cat p.json)`)
  kDevZero,         // /dev/zero (never ends): over the limit (the default limit is capped at 256 KiB)
  kDevNull,         // /dev/null: empty
  kMissing,         // a path that does not exist
  kDirectory,       // a directory
  kShapes
};

constexpr size_t kMaxMessage = 2048;  // "at most a few KB": paths are cut at 200 bytes by printable()
constexpr double kSlack = 3.0;        // seconds past give_up_at a read may take on a loaded machine

const char* kProblem = R"({
  "widths":  [128, 256, 256, 256],
  "heights": [128, 128, 128, 128],
  "inputs":  [[0, 1], [2]],
  "outputs": [[2], [3]],
  "base_costs": [1000, 100],
  "op_types": ["MatMul", "Pointwise"],
  "fast_memory_capacity": 100000,
  "slow_memory_bandwidth": 10,
  "native_granularity": [128, 128]
})";

double steadyNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool knownBugsOn() {
  static const bool on = [] {
    const char* e = std::getenv("MLSYS_FUZZ_KNOWN_BUGS");
    return e && *e == '1';
  }();
  return on;
}

// ---- per-process temporary directory ------------------------------------------------------

std::string g_dir;  // <tmp>/mlsys-fuzz-input-<pid>-XXXXXX

void removeDir() {
  if (g_dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(g_dir, ec);
}

// Directories of earlier runs that crashed (abort skips atexit): removed when their pid is gone.
void sweepStaleDirs(const std::string& tmp) try {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(tmp, ec)) {
    const std::string n = e.path().filename().string();
    static const std::string kPrefix = "mlsys-fuzz-input-";
    if (n.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    const long pid = std::strtol(n.c_str() + kPrefix.size(), nullptr, 10);
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ec2;
      std::filesystem::remove_all(e.path(), ec2);
    }
  }
} catch (const std::exception&) {
  // best effort
}

int countFds() {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  while (::readdir(d)) ++n;
  ::closedir(d);
  return n;
}

// ---- checks ---------------------------------------------------------------------------------

std::string shown(const std::string& m) { return "'" + printable(m, 400) + "'"; }

// Known, reported bugs (README), excused unless MLSYS_FUZZ_KNOWN_BUGS=1 so that fuzzing goes on
// past them: parseProblemFile/parseScheduleFile put the raw path in the parse context
// ("problem '<path>': ..."), and parseJsonDoc's "duplicate key \"<key>\"" quotes the decoded key
// raw and uncut (control bytes from \u0001 escapes; a NUL cuts what() short). Both are rewritten
// here as printable() would have written them.
void excuseKnownBugs(std::string& m, const std::string& rawPath) {
  if (knownBugsOn()) return;
  if (!rawPath.empty())
    for (size_t at = m.find(rawPath); at != std::string::npos; at = m.find(rawPath, at + 1))
      m.replace(at, rawPath.size(), printable(rawPath));
  static const std::string kDup = "duplicate key \"";
  if (const size_t a = m.find(kDup); a != std::string::npos) {
    const size_t from = a + kDup.size();
    size_t to = m.rfind("\" at line ");
    if (to == std::string::npos || to < from) to = m.size();  // cut at a NUL: no tail
    m.replace(from, to - from, printable(std::string_view(m).substr(from, to - from)));
  }
}

// An error message must be one printable line or a few (no raw control byte but '\n') and short.
void checkMessage(std::string m, const std::string& where, const std::string& rawPath = "") {
  excuseKnownBugs(m, rawPath);
  if (m.size() > kMaxMessage)
    fuzz::bug(where + ": error message of " + std::to_string(m.size()) + " bytes: " + shown(m));
  for (unsigned char c : m)
    if (c < 0x20 && c != '\n')
      fuzz::bug(where + ": raw control byte " + std::to_string(c) + " in the error message " + shown(m));
}

struct ReadResult {
  std::optional<std::string> text;  // set on success
  std::string error;                // the InputError's message otherwise
  double seconds = 0;
};

template <class F>
void onlyInputError(const std::string& where, F&& f, std::string* err) {
  try {
    f();
  } catch (const InputError& e) {
    *err = e.what();
    if (err->empty()) fuzz::bug(where + ": InputError with an empty message");
    return;
  } catch (const std::exception& e) {
    fuzz::bug(where + ": an exception other than InputError escaped: " + shown(e.what()));
  } catch (...) {
    fuzz::bug(where + ": a non-std exception escaped");
  }
}

ReadResult readChecked(const std::string& path, const ReadLimits& lim) {
  ReadResult r;
  const double t0 = steadyNow();
  onlyInputError(
      "readTextFile", [&] { r.text = readTextFile(path, "problem", lim); }, &r.error);
  r.seconds = steadyNow() - t0;
  if (!r.text) checkMessage(r.error, "readTextFile");
  return r;
}

// ---- one execution ----------------------------------------------------------------------------

struct Input {
  Shape shape;
  uint8_t limit_byte, aux, flags;
  std::string name;  // file name in g_dir
  std::string content;
};

bool parseInput(const uint8_t* data, size_t size, Input& in) {
  if (size < 4) return false;
  in.shape = static_cast<Shape>(data[0] % kShapes);
  in.limit_byte = data[1];
  in.aux = data[2];
  in.flags = data[3];
  size_t pos = 4;
  in.name = "in";
  if (in.flags & 1) {
    if (pos >= size) return false;
    const size_t len = data[pos++] & 31;
    if (pos + len > size) return false;
    in.name = "f";
    for (size_t i = 0; i < len; ++i) {
      const char c = static_cast<char>(data[pos + i]);
      in.name += (c == '/' || c == '\0') ? '_' : c;
    }
    pos += len;
  }
  in.content.assign(reinterpret_cast<const char*>(data) + pos, size - pos);
  return true;
}

// Parses the text read (and, for a file that can be read again, the file itself through the
// parse*File entry points, which must agree).
void parseChecked(const Input& in, const std::string& text, const std::string& path, const ReadLimits& lim,
                  bool rereadable) {
  static const Problem fixed = parseProblemText(kProblem, "fixed");
  if (fuzz::skipKnownBug(reinterpret_cast<const uint8_t*>(text.data()), text.size())) return;
  std::string e1, e2;
  onlyInputError(
      "parseProblemText", [&] { (void)parseProblemText(text, "fuzz"); }, &e1);
  if (!e1.empty()) checkMessage(e1, "parseProblemText");
  if (rereadable) {
    onlyInputError(
        "parseProblemFile", [&] { (void)parseProblemFile(path, lim); }, &e2);
    if (!e2.empty()) checkMessage(e2, "parseProblemFile", path);
    if (e1.empty() != e2.empty())
      fuzz::bug("parseProblemText and parseProblemFile disagree: " + shown(e1) + " vs " + shown(e2));
  }
  if (!(in.flags & 2)) return;
  e1.clear();
  e2.clear();
  onlyInputError(
      "parseScheduleText", [&] { (void)parseScheduleText(text, fixed, "fuzz"); }, &e1);
  if (!e1.empty()) checkMessage(e1, "parseScheduleText");
  if (rereadable) {
    onlyInputError(
        "parseScheduleFile", [&] { (void)parseScheduleFile(path, fixed, lim); }, &e2);
    if (!e2.empty()) checkMessage(e2, "parseScheduleFile", path);
    if (e1.empty() != e2.empty())
      fuzz::bug("parseScheduleText and parseScheduleFile disagree: " + shown(e1) + " vs " + shown(e2));
  }
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// The message with the quoted path taken out, so that a file name such as "over the input limit"
// (the fuzzer finds that) cannot satisfy the phrase checks.
std::string withoutPath(std::string m, const std::string& path) {
  for (const std::string& p : {printable(path), path}) {
    if (p.empty()) continue;
    for (size_t at = m.find(p); at != std::string::npos; at = m.find(p, at)) m.replace(at, p.size(), "<path>");
  }
  return m;
}

// The state of one execution, set up, read and checked in steps by runOne.
struct Run {
  explicit Run(const Input& input) : in(input) {
    if (in.limit_byte != 255) lim.max_bytes = 16.0 * in.limit_byte;
  }

  const Input& in;
  const std::string path = g_dir + "/" + in.name;
  const bool named = in.flags & 1;
  const bool yield = in.flags & 4;
  ReadLimits lim;
  const size_t chunk = in.aux < 8 ? in.aux + 1u : 16u * in.aux;
  const double shortWait = (1 + in.aux % 8) / 1000.0;
  const size_t prefix = in.content.size() * in.aux / 255;  // what an early-closing or stalling writer writes

  std::string readPath = path;       // what readTextFile is given
  std::optional<std::string> exact;  // the bytes a complete read returns (nullopt: no such promise)
  bool rereadable = false;           // a regular file: parse*File can read it again
  std::string extra;                 // a second path to remove (symlink target)
  bool isDir = false;
  fuzz::Writer w;
  int pfd[2] = {-1, -1};
  const char* mustSay = nullptr;  // an error is expected, saying this (nullptr: success or over-limit)
  const char* orSay = nullptr;    // ... or this

  // Creates the file, FIFO, pipe, symlink or directory the shape asks for.
  void prepareInput() {
    switch (in.shape) {
      case kRegular:
      case kRegularOver:
        if (in.shape == kRegularOver && !in.content.empty()) lim.max_bytes = in.limit_byte % in.content.size();
        fuzz::writeFile(path, in.content);
        exact = in.content;
        rereadable = true;
        break;
      case kSymlink:
        extra = g_dir + "/target";
        fuzz::writeFile(extra, in.content);
        fuzz::makeSymlink(extra, path);
        exact = in.content;
        rereadable = true;
        break;
      case kFifoFull:
      case kFifoEarlyClose:
      case kFifoNoWriter:
      case kFifoStall:
        if (::mkfifo(path.c_str(), 0600) != 0) fuzz::bug(std::string("harness: mkfifo: ") + std::strerror(errno));
        break;
      case kPipe:
      case kPipeClosed: {
        if (::pipe2(pfd, O_CLOEXEC) != 0) fuzz::bug(std::string("harness: pipe2: ") + std::strerror(errno));
        ::fcntl(pfd[1], F_SETFL, O_NONBLOCK);
        readPath = "/proc/self/fd/" + std::to_string(pfd[0]);
        if (named) {
          fuzz::makeSymlink(readPath, path);
          readPath = path;
        }
        break;
      }
      case kDevZero:
      case kDevNull:
        readPath = in.shape == kDevZero ? "/dev/zero" : "/dev/null";
        if (in.shape == kDevZero && in.limit_byte == 255) lim.max_bytes = 256 * 1024;
        if (named) {
          fuzz::makeSymlink(readPath, path);
          readPath = path;
        }
        if (in.shape == kDevNull) exact = "";
        else mustSay = "over the input limit";
        break;
      case kMissing: mustSay = "cannot open"; break;
      case kDirectory:
        if (::mkdir(path.c_str(), 0700) != 0) fuzz::bug(std::string("harness: mkdir: ") + std::strerror(errno));
        isDir = true;
        mustSay = "it is a directory";
        break;
      case kShapes: break;
    }
  }
  // Waits: a short one where the read must time out, a generous one where it must not.
  void setWaits() {
    const double start = steadyNow();
    switch (in.shape) {
      case kFifoNoWriter:
      case kFifoStall: lim.give_up_at = start + shortWait; break;
      case kFifoFull:
      case kFifoEarlyClose:
      case kPipe:
      case kPipeClosed: lim.give_up_at = start + 5; break;
      default: break;  // 0: now + 10 s
    }
  }
  // Writers.
  void startWriters() {
    switch (in.shape) {
      case kFifoFull: fuzz::fifoWriter(w, path, in.content, in.content.size(), chunk, yield, false); break;
      case kFifoEarlyClose: fuzz::fifoWriter(w, path, in.content, prefix, chunk, yield, false); break;
      case kFifoStall:
        fuzz::fifoWriter(w, path, in.content, prefix, chunk, yield, true);
        mustSay = "within the time limit";
        orSay = "over the input limit";
        break;
      case kFifoNoWriter: mustSay = "no data within the time limit"; break;
      case kPipe: {
        const int wfd = pfd[1];
        pfd[1] = -1;
        w.start([&w = w, wfd, &in = in, chunk = chunk, yield = yield] {
          w.written = fuzz::writeChunks(wfd, in.content, in.content.size(), chunk, yield, &w.reader_done);
          ::close(wfd);
        });
        break;
      }
      case kPipeClosed: {
        // What fits is the content.
        w.written = fuzz::writeChunks(pfd[1], in.content, in.content.size(), chunk, false, nullptr);
        exact = in.content.substr(0, w.written);
        ::close(pfd[1]);
        pfd[1] = -1;
        break;
      }
      default: break;
    }
  }
  // After the read and the writer's join: what a complete read returns, given what was written.
  void settleExpected(const ReadResult& r) {
    switch (in.shape) {
      case kFifoFull:
        if (w.opened) exact = in.content;
        break;
      case kFifoEarlyClose:
        if (w.opened) exact = in.content.substr(0, w.written);
        break;
      case kPipe: exact = in.content.substr(0, w.written); break;
      default: break;
    }
    if (in.shape == kFifoFull && w.written != in.content.size() && r.text)
      fuzz::bug("harness: the FIFO writer stopped at " + std::to_string(w.written) + " of " +
                std::to_string(in.content.size()) + " bytes while the read succeeded");
  }
  // The checks on the read's result: its time, its error or the bytes it returned.
  void checkRead(const ReadResult& r) const {
    const std::string shapeName = "shape " + std::to_string(in.shape) + " (limit " +
                                  std::to_string(static_cast<long long>(lim.max_bytes)) + ", " +
                                  std::to_string(in.content.size()) + " content bytes)";
    // Time: bounded by the wait asked for.
    if (lim.give_up_at > 0 && steadyNow() > lim.give_up_at + kSlack)
      fuzz::bug(shapeName + ": the read took " + std::to_string(r.seconds) + " s, past its give_up_at by more than " +
                std::to_string(kSlack) + " s");
    if (mustSay) {
      if (r.text)
        fuzz::bug(shapeName + ": the read succeeded (" + std::to_string(r.text->size()) +
                  " bytes), expected an error saying '" + mustSay + "'");
      if (!has(r.error, mustSay) && !(orSay && has(r.error, orSay)))
        fuzz::bug(shapeName + ": expected an error saying '" + mustSay + "', got " + shown(r.error));
      if (in.shape == kFifoStall && has(r.error, "over the input limit") &&
          !(static_cast<double>(prefix) > lim.max_bytes))
        fuzz::bug(shapeName + ": over the limit with a prefix of " + std::to_string(prefix) +
                  " bytes: " + shown(r.error));
      if ((in.shape == kFifoNoWriter || in.shape == kFifoStall) && has(r.error, "within the time limit") &&
          steadyNow() < lim.give_up_at)
        fuzz::bug(shapeName + ": timed out before give_up_at");
    } else if (exact) {
      if (static_cast<double>(exact->size()) > lim.max_bytes) {
        if (r.text) fuzz::bug(shapeName + ": read " + std::to_string(r.text->size()) + " bytes over the limit");
        if (!has(r.error, "over the input limit"))
          fuzz::bug(shapeName + ": over the limit but the error says " + shown(r.error));
      } else {
        if (!r.text) fuzz::bug(shapeName + ": a complete input within the limit failed: " + shown(r.error));
        if (*r.text != *exact)
          fuzz::bug(shapeName + ": read " + std::to_string(r.text->size()) + " bytes, not the " +
                    std::to_string(exact->size()) + " bytes written");
      }
    } else if (!r.text && (in.shape == kFifoFull || in.shape == kFifoEarlyClose)) {
      // The writer never got the FIFO open: only a timeout can explain that.
      if (!has(r.error, "within the time limit"))
        fuzz::bug(shapeName + ": the writer never opened, yet " + shown(r.error));
    }
  }
  // Cleanup.
  void cleanup() {
    if (pfd[0] >= 0) ::close(pfd[0]);
    if (pfd[1] >= 0) ::close(pfd[1]);
    if (in.shape != kMissing) fuzz::removePath(path, isDir);
    if (!extra.empty()) fuzz::removePath(extra);
  }
};

void runOne(const Input& in) {
  Run run(in);
  run.prepareInput();
  run.setWaits();
  run.startWriters();
  ReadResult r = readChecked(run.readPath, run.lim);
  r.error = withoutPath(r.error, run.readPath);  // messages were checked whole; phrases are checked without the path
  run.w.join();
  run.settleExpected(r);
  run.checkRead(r);
  if (r.text) parseChecked(in, *r.text, run.path, run.lim, run.rereadable);
  run.cleanup();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::signal(SIGPIPE, SIG_IGN);  // a FIFO writer whose reader left gets EPIPE, not a signal
  const char* t = std::getenv("TMPDIR");
  const std::string tmp = t && *t ? t : "/tmp";
  sweepStaleDirs(tmp);
  std::string tmpl = tmp + "/mlsys-fuzz-input-" + std::to_string(::getpid()) + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::perror("fuzz_input: mkdtemp");
    std::abort();
  }
  g_dir = tmpl;
  std::atexit(removeDir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in;
  if (!parseInput(data, size, in)) return 0;
  const int fds = countFds();
  runOne(in);
  const int after = countFds();
  if (after != fds)
    fuzz::bug("file descriptors: " + std::to_string(fds) + " open before the execution, " + std::to_string(after) +
              " after");
  std::error_code ec;
  if (!std::filesystem::is_empty(g_dir, ec)) fuzz::bug("harness: temporary files left in " + g_dir);
  return 0;
}
