// Output files: atomic replacement of regular files, in-place writes for everything else, clean-up
// of temporary files left by killed runs, and file identity (two names for one file). Also the
// configs shipped beside the installed binary.
#pragma once
#include <string>

namespace mlsys {

// Where a write to `path` lands: ordinary symlinks are followed (also a dangling one: the link
// stays a link and its target is written), `.` and `..` are resolved. A path that leads through
// /proc is returned as it is (see OutputTarget).
std::string resolveOutputPath(const std::string& path);

// How an output path is written, decided once (OutputTarget::open) before any search:
//   Replace  a regular file, or a name that does not exist yet (also at the end of a chain of
//            ordinary symlinks, even a dangling one: the link stays, its target is written).
//            Each write goes to a temporary file `<target>.tmp.<pid>.XXXXXX` created exclusively
//            (mkstemp) beside the target, fsynced and renamed over it; the target's mode is kept.
//   InPlace  a path that leads through /proc (/dev/stdout, /dev/fd/N, /proc/self/fd/N: "magic"
//            links that name an open file of the process, not a place in a directory) or to a file
//            that is not a regular file (a device, a FIFO, a socket). It is never replaced: a
//            regular file behind a magic link is opened once and rewritten in place (truncated,
//            then written) at each write; a device, a FIFO, a pipe or a socket is written once, at
//            the end (see OutputWriter). Opens never block: a FIFO without a reader is retried
//            until the caller's limit, then reported.
class OutputTarget {
 public:
  enum class Mode { Replace, InPlace };
  // Decides the mode and checks that the path can be written (an existing directory, a missing or
  // non-writable parent directory are errors now, not after the search): throws InputError
  // "<what> '<path>': <reason>".
  static OutputTarget open(const std::string& path, const std::string& what);
  OutputTarget() = default;
  OutputTarget(OutputTarget&& o) noexcept;
  OutputTarget& operator=(OutputTarget&& o) noexcept;
  OutputTarget(const OutputTarget&) = delete;
  OutputTarget& operator=(const OutputTarget&) = delete;
  ~OutputTarget();

  Mode mode() const { return mode_; }
  // True for what is written once, at the end: a pipe, a FIFO, a device or a socket.
  bool writeOnce() const { return write_once_; }
  const std::string& path() const { return path_; }
  // Writes the whole content. `give_up_at` (monotonicSeconds) bounds the waits of a FIFO or pipe
  // (for a reader, for room); past it the write fails. Throws std::runtime_error naming the path,
  // with the errno text.
  void write(const std::string& content, double give_up_at = 1e300);
  // Replace mode: true if the target is still the file this process wrote last (no other process
  // or person has replaced or removed it since). True in place and before any write.
  bool stillOurs() const;

 private:
  Mode mode_ = Mode::Replace;
  std::string path_;    // as given (messages)
  std::string target_;  // Replace: the resolved file that is replaced; InPlace: what is opened
  bool write_once_ = false;
  bool fifo_ = false;  // a named FIFO: opened at its write (a reader may come later)
  int fd_ = -1;        // InPlace: the open target (a FIFO only once written)
  bool written_ = false;
  unsigned long long dev_ = 0, ino_ = 0;  // Replace: the file renamed over the target last
};

// Seconds on the steady clock (the unit of OutputTarget::write's give_up_at).
double monotonicSeconds();

// Writes `content` to `path` once: OutputTarget::open(path, "cannot write").write(content).
void writeFileAtomic(const std::string& path, const std::string& content);

// Removes `<target>.tmp.<pid>.XXXXXX` files (the names of OutputTarget's temporary files, with
// mkstemp's six characters) whose process no longer exists, left by a run killed during a write.
// Files of live processes, and names of any other shape (`<target>.tmp.<pid>` may be a user's),
// are kept. Returns the count.
int removeStaleTemps(const std::string& path);

// True when the two names denote the same file: same device and inode when both exist, otherwise
// the same resolved path.
bool sameFile(const std::string& a, const std::string& b);

// The configs directory of the installed bundle: <directory of the running binary, from
// /proc/self/exe>/../share/mlsys/configs ("" if the binary's path cannot be read).
std::string bundledConfigDir();

// The file a `-c` argument names: `path` itself when it exists or has a directory part; otherwise
// (a bare name such as `contest` or `contest.yaml` absent from the working directory) the shipped
// config of that name, with or without .yaml: in the bundle's share/mlsys/configs, or, for a
// binary in a build tree, in the source tree's configs/ (MLSYS_CONFIG_DIR); otherwise an
// InputError that says where it looked.
std::string findConfig(const std::string& path);

}  // namespace mlsys
