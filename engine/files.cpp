#include "engine/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace mlsys {
namespace {

// The process umask, read once before any thread starts (umask() can only be read by setting it).
const mode_t kUmask = [] {
  mode_t m = ::umask(0);
  ::umask(m);
  return m;
}();

std::string err(const std::string& what, const std::string& path, int e) {
  return what + " '" + path + "': " + std::strerror(e);
}

void writeAll(int fd, const std::string& content, const std::string& path) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(err("cannot write", path, errno));
    }
    done += static_cast<size_t>(n);
  }
}

bool processAlive(long pid) {
  if (pid <= 0) return true;  // not a pid we can judge: keep the file
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

}  // namespace

std::string resolveOutputPath(const std::string& path) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::path(path), ec);
  return ec ? path : r.string();
}

bool isSpecialFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

void writeFileAtomic(const std::string& path, const std::string& content) {
  const std::string target = resolveOutputPath(path);
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw std::runtime_error("cannot write '" + path + "': it is a directory");
    // A device, FIFO or socket: never replace it (as root, a rename would turn /dev/null into a
    // regular file); write in place.
    int fd = ::open(target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) throw std::runtime_error(err("cannot write", path, errno));
    try {
      writeAll(fd, content, path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    return;
  }
  // mkstemp creates the file with O_CREAT|O_EXCL: a symlink or file placed at the name beforehand
  // makes it pick another name instead of writing through it.
  std::string tmp = target + ".tmp." + std::to_string(::getpid()) + ".XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw std::runtime_error(err("cannot create a temporary file for", path, errno));
  auto fail = [&](const std::string& what) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(err(what, tmp, e));
  };
  if (::fchmod(fd, 0666 & ~kUmask) != 0) fail("cannot set the mode of");
  try {
    writeAll(fd, content, tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::fsync(fd) != 0) fail("cannot flush");
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(err("cannot flush", tmp, e));
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot rename '" + tmp + "' to '" + target + "': " + std::strerror(e));
  }
}

int removeStaleTemps(const std::string& path) {
  fs::path target(resolveOutputPath(path));
  std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  std::string prefix = target.filename().string() + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  int removed = 0;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    // <prefix><pid> or <prefix><pid>.XXXXXX (mkstemp's six characters).
    size_t i = prefix.size(), j = i;
    while (j < name.size() && j - i < 10 && name[j] >= '0' && name[j] <= '9') ++j;
    if (j == i) continue;
    if (j != name.size() && !(name[j] == '.' && name.size() - j - 1 == 6)) continue;
    if (processAlive(std::stol(name.substr(i, j - i)))) continue;
    std::string full = dir + "/" + name;
    struct stat st;
    // Only files and links (unlink removes a link, not its target); never a directory.
    if (::lstat(full.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && ::unlink(full.c_str()) == 0)
      ++removed;
  }
  ::closedir(d);
  return removed;
}

bool sameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  bool ea = ::stat(a.c_str(), &sa) == 0, eb = ::stat(b.c_str(), &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return false;
  return resolveOutputPath(a) == resolveOutputPath(b);
}

std::string bundledConfigDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : (exe.parent_path().parent_path() / "share" / "mlsys" / "configs").string();
}

std::string findConfig(const std::string& path) {
  std::error_code ec;
  if (path.empty() || fs::exists(path, ec) || fs::path(path).has_parent_path()) return path;
  std::string dir = bundledConfigDir();
  if (dir.empty()) return path;
  fs::path shipped = fs::path(dir) / path;
  return fs::is_regular_file(shipped, ec) ? shipped.string() : path;
}

}  // namespace mlsys
