// Writers for fuzz_input: feed FIFOs and pipes in chunks, from one writer thread for the whole
// process or directly, and create (and remove) the regular files, symlinks and directories read.
#pragma once
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "cost/model/json_util.h"
#include "tests/fuzz/fuzz_common.h"

namespace mlsys::fuzz {

inline void sleepUs(int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

// At most this many writes per execution: a 1-byte chunk size on 8 KB of content, with the reader
// woken for every byte, took seconds on a loaded machine (and sched_yield under contention more).
constexpr size_t kMaxChunks = 64;

// Writes s[0, n) to the non-blocking `fd` in chunks of at least n / kMaxChunks bytes. From a
// writer thread (`stop` set): stops as soon as the reader is done, on an error (EPIPE once the
// reader left), and waits for room otherwise. Without `stop`: stops when the pipe is full.
// Returns the bytes written.
inline size_t writeChunks(int fd, const std::string& s, size_t n, size_t chunk, bool yield,
                          const std::atomic<bool>* stop) {
  chunk = std::max(chunk, (n + kMaxChunks - 1) / kMaxChunks);
  size_t off = 0;
  while (off < n && !(stop && stop->load())) {
    const ssize_t k = ::write(fd, s.data() + off, std::min(chunk, n - off));
    if (k > 0) {
      off += static_cast<size_t>(k);
      if (yield) ::sched_yield();
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && errno == EAGAIN && stop) {
      pollfd pf{fd, POLLOUT, 0};
      ::poll(&pf, 1, 5);
      continue;
    }
    break;
  }
  return off;
}

// One writer thread for the whole process, handed a job per execution: a new std::thread per
// execution made ASan's thread registry grow by about 200 bytes each (400 MB in a 30-minute run).
class WriterThread {
 public:
  static WriterThread& get() {
    static WriterThread* w = new WriterThread;  // never destroyed: the thread outlives main's statics
    return *w;
  }
  void start(std::function<void()> job) {
    std::lock_guard<std::mutex> lk(m_);
    job_ = std::move(job);
    busy_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lk(m_);
    cv_.wait(lk, [&] { return !busy_; });
  }

 private:
  WriterThread() {
    std::thread([this] { loop(); }).detach();
  }
  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return static_cast<bool>(job_); });
        job = std::move(job_);
        job_ = nullptr;
      }
      job();
      std::lock_guard<std::mutex> lk(m_);
      busy_ = false;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool busy_ = false;
};

struct Writer {
  std::atomic<bool> reader_done{false};
  bool started = false;
  size_t written = 0;  // valid after join()
  bool opened = false;

  void start(std::function<void()> job) {
    started = true;
    WriterThread::get().start(std::move(job));
  }
  void join() {
    reader_done = true;
    if (started) WriterThread::get().wait();
    started = false;
  }
  ~Writer() { join(); }
};

// FIFO writer: opens without blocking (ENXIO until the reader is there), writes n bytes, then
// closes, or with `stall` holds the FIFO open until the reader is done.
inline void fifoWriter(Writer& w, std::string path, const std::string& s, size_t n, size_t chunk, bool yield,
                       bool stall) {
  w.start([&w, path = std::move(path), &s, n, chunk, yield, stall] {
    int fd = -1;
    while (!w.reader_done.load()) {
      fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0 || (errno != ENXIO && errno != EINTR)) break;
      sleepUs(20);
    }
    if (fd < 0) return;
    w.opened = true;
    w.written = writeChunks(fd, s, n, chunk, yield, &w.reader_done);
    if (stall)
      while (!w.reader_done.load()) sleepUs(100);
    ::close(fd);
  });
}

// The regular files, symlinks and directories of one execution (a failure is a harness bug).
inline void writeFile(const std::string& path, const std::string& s) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) fuzz::bug("harness: cannot create " + printable(path) + ": " + std::strerror(errno));
  for (size_t off = 0; off < s.size();) {
    const ssize_t k = ::write(fd, s.data() + off, s.size() - off);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) fuzz::bug(std::string("harness: cannot write the temporary file: ") + std::strerror(errno));
    off += static_cast<size_t>(k);
  }
  ::close(fd);
}

inline void makeSymlink(const std::string& target, const std::string& link) {
  if (::symlink(target.c_str(), link.c_str()) != 0)
    fuzz::bug("harness: cannot create the symlink " + printable(link) + ": " + std::strerror(errno));
}

inline void removePath(const std::string& path, bool dir = false) {
  if ((dir ? ::rmdir(path.c_str()) : ::unlink(path.c_str())) != 0 && errno != ENOENT)
    fuzz::bug("harness: cannot remove " + printable(path) + ": " + std::strerror(errno));
}

}  // namespace mlsys::fuzz
