// Output files: atomic replacement of regular files, in-place writes for everything else, clean-up
// of temporary files left by killed runs, and file identity (two names for one file). Also the
// configs shipped beside the installed binary.
#pragma once
#include <string>

namespace mlsys {

// Where a write to `path` lands: symlinks are followed (the link stays a link and its target is
// replaced), `.` and `..` are resolved.
std::string resolveOutputPath(const std::string& path);

// True when `path` exists and is not a regular file once symlinks are followed (a device, a FIFO,
// a socket): such a file is written in place, never replaced.
bool isSpecialFile(const std::string& path);

// Writes `content` to `path`. A regular (or absent) file is replaced atomically: a temporary file
// `<path>.tmp.<pid>.XXXXXX` is created exclusively (mkstemp: never follows a pre-placed symlink)
// in the same directory, written, fsynced and renamed over the path. A special file is opened
// without O_CREAT and written in place. Throws std::runtime_error with errno text on failure.
void writeFileAtomic(const std::string& path, const std::string& content);

// Removes `<path>.tmp.<pid>` and `<path>.tmp.<pid>.XXXXXX` files whose process no longer exists
// (left by a run killed during a write). Files of live processes are kept. Returns the count.
int removeStaleTemps(const std::string& path);

// True when the two names denote the same file: same device and inode when both exist, otherwise
// the same resolved path.
bool sameFile(const std::string& a, const std::string& b);

// The configs directory of the installed bundle: <directory of the running binary, from
// /proc/self/exe>/../share/mlsys/configs ("" if the binary's path cannot be read).
std::string bundledConfigDir();

// The file a `-c` argument names: `path` itself when it exists or has a directory part; otherwise
// (a bare name such as `contest.yaml` absent from the working directory) the bundle's
// configs/<path> when that is a file; otherwise `path` unchanged, so that the error names it.
std::string findConfig(const std::string& path);

}  // namespace mlsys
