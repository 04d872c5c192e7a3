#include "engine/io/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "cost/model/types.h"

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

bool processAlive(long pid) {
  if (pid <= 0) return true;  // not a pid we can judge: keep the file
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

bool underProc(const fs::path& p) {
  const std::string s = p.string();
  return s == "/proc" || s.rfind("/proc/", 0) == 0;
}

// Where `path` leads. Ordinary symlinks are followed by hand, one hop at a time (a dangling one
// too: its target is the file to write), with each hop's directory made canonical; a hop whose
// directory lies in /proc is a "magic" link (an open file of a process, /proc/self/fd/1 or what
// /dev/stdout and /dev/fd/N lead to), which has no place in a directory to write a file beside.
struct Resolved {
  fs::path file;  // the last hop (absolute); for a magic link, its /proc name
  bool magic = false;
  bool parent_missing = false;  // a directory on the way does not exist
  fs::path parent;              // file's directory (canonical), when not magic
};

Resolved resolveChain(const std::string& path) {
  Resolved r;
  std::error_code ec;
  fs::path cur = fs::absolute(fs::path(path), ec);
  if (ec) cur = fs::path(path);
  for (int hop = 0; hop < 40; ++hop) {
    fs::path name = cur.filename();
    if (name.empty() || name == "." || name == "..") {  // "dir/", "dir/.": the directory itself
      fs::path c = fs::weakly_canonical(cur, ec);
      if (!ec) cur = c;
      if (underProc(cur)) r.magic = true;
      r.file = cur;
      r.parent = cur.parent_path();
      return r;
    }
    fs::path dir = fs::canonical(cur.parent_path(), ec);
    if (ec) {
      r.file = cur.lexically_normal();
      r.parent = cur.parent_path().lexically_normal();
      r.parent_missing = true;
      return r;
    }
    if (underProc(dir)) {
      r.magic = true;
      r.file = dir / name;
      r.parent = dir;
      return r;
    }
    fs::path full = dir / name;
    struct stat st;
    if (::lstat(full.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      r.file = full;
      r.parent = dir;
      return r;
    }
    fs::path link = fs::read_symlink(full, ec);
    if (ec) {
      r.file = full;
      r.parent = dir;
      return r;
    }
    cur = link.is_absolute() ? link : dir / link;
  }
  // A loop of links: let the open report it (ELOOP).
  r.file = fs::path(path);
  r.parent = r.file.parent_path();
  return r;
}

// N when `path` leads to /proc/<this process>/fd/N (/dev/stdout, /dev/fd/N); -1 otherwise.
int ownFdNumber(const std::string& path) {
  Resolved r = resolveChain(path);
  if (!r.magic) return -1;
  const std::string dir = r.parent.string(), name = r.file.filename().string();
  if (dir != "/proc/" + std::to_string(::getpid()) + "/fd" && dir != "/proc/self/fd") return -1;
  if (name.empty() || name.size() > 9 || name.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(name);
}

// Waits until `fd` can be written, at most until `give_up_at`; false on time-out.
bool waitWritable(int fd, double give_up_at) {
  for (;;) {
    double left = give_up_at - monotonicSeconds();
    if (left <= 0) return false;
    pollfd pf{fd, POLLOUT, 0};
    int ms = left > 1e6 ? 1000000000 : static_cast<int>(std::ceil(left * 1000));
    int n = ::poll(&pf, 1, ms);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // let write() report it
  }
}

// Writes all of `content` to `fd`, waiting (poll) while a non-blocking pipe is full.
void writeAllFd(int fd, const std::string& content, const std::string& path, double give_up_at) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (!waitWritable(fd, give_up_at))
          throw std::runtime_error("cannot write '" + path +
                                   "': no room to write within the time limit (is the reader reading?)");
        continue;
      }
      throw std::runtime_error(err("cannot write", path, errno));
    }
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void inputErr(const std::string& what, const std::string& path, const std::string& why) {
  throw InputError(what + " '" + path + "': " + why);
}

}  // namespace

double monotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string resolveOutputPath(const std::string& path) {
  Resolved r = resolveChain(path);
  return r.file.string();
}

OutputTarget OutputTarget::open(const std::string& path, const std::string& what) {
  OutputTarget t;
  t.path_ = path;
  if (path.empty()) inputErr(what, path, "the name is empty");
  Resolved r = resolveChain(path);
  struct stat st;
  if (r.magic) {
    // An open file of a process: write to it in place, never replace it.
    t.mode_ = Mode::InPlace;
    t.target_ = path;
    int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 && (errno == ENXIO || errno == ENOENT || errno == EACCES)) {
      const int e = errno;
      if (::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode) && e == ENXIO) {  // a FIFO with no reader yet
        t.fifo_ = t.write_once_ = true;
        return t;
      }
      // A socket cannot be opened through /proc: use the process's own descriptor.
      if (int n = ownFdNumber(path); n >= 0) fd = ::fcntl(n, F_DUPFD_CLOEXEC, 3);
      if (fd < 0) errno = e;
    }
    if (fd < 0) inputErr(what, path, std::strerror(errno));
    t.fd_ = fd;
    if (::fstat(fd, &st) != 0) inputErr(what, path, std::strerror(errno));
    if (S_ISDIR(st.st_mode)) inputErr(what, path, "it is a directory");
    t.write_once_ = !S_ISREG(st.st_mode);
    // A regular file opened for appending (`>> log`) is appended to, once, never truncated.
    if (int n = ownFdNumber(path); n >= 0 && S_ISREG(st.st_mode)) {
      int fl = ::fcntl(n, F_GETFL);
      if (fl >= 0 && (fl & O_APPEND)) {
        t.write_once_ = true;
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_APPEND);
      }
    }
    if (S_ISREG(st.st_mode)) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return t;
  }
  if (r.parent_missing) inputErr(what, path, "the directory '" + r.parent.string() + "' does not exist");
  t.target_ = r.file.string();
  if (::stat(t.target_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) inputErr(what, path, "it is a directory");
    if (!S_ISREG(st.st_mode)) {
      // A device, FIFO or socket: never replace it (as root, a rename would turn /dev/null into a
      // regular file); written in place, once.
      t.mode_ = Mode::InPlace;
      t.write_once_ = true;
      if (S_ISFIFO(st.st_mode)) {
        t.fifo_ = true;
        return t;
      }
      int fd = ::open(t.target_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
      if (fd < 0) inputErr(what, path, std::strerror(errno));
      t.fd_ = fd;
      return t;
    }
  } else if (errno != ENOENT) {
    inputErr(what, path, std::strerror(errno));
  }
  struct stat dst;
  if (::stat(r.parent.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode))
    inputErr(what, path, "the directory '" + r.parent.string() + "' does not exist");
  if (::access(r.parent.c_str(), W_OK | X_OK) != 0)
    inputErr(what, path, "cannot create files in '" + r.parent.string() + "': " + std::strerror(errno));
  return t;
}

OutputTarget::OutputTarget(OutputTarget&& o) noexcept { *this = std::move(o); }

OutputTarget& OutputTarget::operator=(OutputTarget&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    mode_ = o.mode_;
    path_ = std::move(o.path_);
    target_ = std::move(o.target_);
    write_once_ = o.write_once_;
    fifo_ = o.fifo_;
    fd_ = o.fd_;
    written_ = o.written_;
    dev_ = o.dev_;
    ino_ = o.ino_;
    o.fd_ = -1;
  }
  return *this;
}

OutputTarget::~OutputTarget() {
  if (fd_ >= 0) ::close(fd_);
}

bool OutputTarget::stillOurs() const {
  if (mode_ != Mode::Replace || !written_) return true;
  struct stat st;
  return ::stat(target_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

void OutputTarget::write(const std::string& content, double give_up_at) {
  if (mode_ == Mode::InPlace) {
    if (write_once_ && written_) return;  // a pipe, FIFO or device gets one schedule
    if (fifo_ && fd_ < 0) {
      // Wait for a reader (open() without one fails with ENXIO instead of blocking).
      for (;;) {
        fd_ = ::open(target_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd_ >= 0) break;
        if (errno != ENXIO && errno != EINTR) throw std::runtime_error(err("cannot write", path_, errno));
        if (monotonicSeconds() >= give_up_at)
          throw std::runtime_error("cannot write '" + path_ +
                                   "': no process opened the FIFO for reading within the time limit");
        ::usleep(10000);
      }
    }
    if (fd_ < 0) throw std::runtime_error("cannot write '" + path_ + "': not open");
    if (!write_once_) {
      // A regular file behind a magic link: rewritten in place.
      if (::ftruncate(fd_, 0) != 0) throw std::runtime_error(err("cannot truncate", path_, errno));
      size_t done = 0;
      while (done < content.size()) {
        ssize_t n = ::pwrite(fd_, content.data() + done, content.size() - done, static_cast<off_t>(done));
        if (n < 0) {
          if (errno == EINTR) continue;
          throw std::runtime_error(err("cannot write", path_, errno));
        }
        done += static_cast<size_t>(n);
      }
      if (::fdatasync(fd_) != 0 && errno != EINVAL && errno != EROFS)
        throw std::runtime_error(err("cannot flush", path_, errno));
      written_ = true;
      return;
    }
    written_ = true;  // even if it fails: a pipe's reader must not get a second, partial copy
    writeAllFd(fd_, content, path_, give_up_at);
    ::close(fd_);  // the reader sees the end of the schedule
    fd_ = -1;
    return;
  }
  // Replace: a temporary file beside the target, then an atomic rename. mkstemp creates it with
  // O_CREAT|O_EXCL: a symlink or file placed at the name beforehand makes it pick another name
  // instead of writing through it.
  struct stat old;
  const bool exists = ::stat(target_.c_str(), &old) == 0;
  if (exists && S_ISDIR(old.st_mode)) throw std::runtime_error("cannot write '" + path_ + "': it is a directory");
  std::string tmp = target_ + ".tmp." + std::to_string(::getpid()) + ".XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw std::runtime_error(err("cannot create a temporary file for", path_, errno));
  auto fail = [&](const std::string& what, int e) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(err(what, tmp, e));
  };
  // The replaced file's mode (and, as root, its owner) carries over; a new file gets 0666 less the umask.
  const mode_t mode = exists && S_ISREG(old.st_mode) ? (old.st_mode & 07777) : (0666 & ~kUmask);
  if (::fchmod(fd, mode) != 0) fail("cannot set the mode of", errno);
  if (exists && ::geteuid() == 0 && (old.st_uid != 0 || old.st_gid != 0)) {
    if (::fchown(fd, old.st_uid, old.st_gid) != 0) { /* best effort */
    }
  }
  try {
    writeAllFd(fd, content, tmp, give_up_at);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::fsync(fd) != 0) fail("cannot flush", errno);
  struct stat mine;
  if (::fstat(fd, &mine) != 0) fail("cannot read the status of", errno);
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(err("cannot flush", tmp, e));
  }
  if (::rename(tmp.c_str(), target_.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot rename '" + tmp + "' to '" + target_ + "': " + std::strerror(e));
  }
  written_ = true;
  dev_ = mine.st_dev;
  ino_ = mine.st_ino;
}

void writeFileAtomic(const std::string& path, const std::string& content) {
  OutputTarget::open(path, "cannot write").write(content);
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
    // Only <prefix><pid>.XXXXXX (mkstemp's six characters): the names this program creates.
    size_t i = prefix.size(), j = i;
    while (j < name.size() && j - i < 10 && name[j] >= '0' && name[j] <= '9') ++j;
    if (j == i) continue;
    if (!(j < name.size() && name[j] == '.' && name.size() - j - 1 == 6)) continue;
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
  // A bare name: a shipped config, with or without its .yaml ("contest", "contest.yaml"), beside
  // the installed binary or, for a binary in a build tree, in the source tree's configs/.
  std::vector<std::string> dirs;
  if (std::string dir = bundledConfigDir(); !dir.empty()) dirs.push_back(dir);
#ifdef MLSYS_CONFIG_DIR
  if (fs::is_directory(MLSYS_CONFIG_DIR, ec)) dirs.push_back(MLSYS_CONFIG_DIR);
#endif
  std::vector<std::string> names = {path};
  if (fs::path(path).extension() != ".yaml") names.push_back(path + ".yaml");
  for (const std::string& dir : dirs)
    for (const std::string& name : names)
      if (fs::path shipped = fs::path(dir) / name; fs::is_regular_file(shipped, ec)) return shipped.string();
  // Found nowhere: say where it was looked for.
  const fs::path cwd = fs::current_path(ec);
  std::string where;
  for (const std::string& dir : dirs) where += (where.empty() ? "" : ", ") + dir;
  throw InputError("config '" + path + "' not found: looked in the working directory (" +
                   (ec ? std::string("?") : cwd.string()) + ")" +
                   (where.empty() ? std::string() : " and in the shipped configs (" + where + ")") +
                   "; give a path, or one of the shipped names (configs/*.yaml, with or without .yaml)");
}

}  // namespace mlsys
