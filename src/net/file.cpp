// AsyncFile on the default thread pool (see file.hpp).
//
// Invariants, all loop-side state touched on the loop thread only:
// 1. A job on the pool holds the FileState (shared_ptr), so the descriptor it
//    uses cannot be closed, nor its number reused, under it: close() waits for
//    every job, and a state dropped without close() closes the descriptor when
//    the last job lets go of it.
// 2. `positional` is held from the start of a positional job to its end on
//    the loop (a done-callback releases it), not to the end of its awaiter:
//    a cancelled read or write still occupies the position until it is done.
// 3. `carry` holds bytes a cancelled read() read; only the holder of
//    `positional` touches it, so the next read serves them first, in order.
#include <corio/file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>

#include <corio/errors.hpp>
#include <corio/event.hpp>
#include <corio/event_loop.hpp>
#include <corio/lock.hpp>
#include <corio/shield.hpp>
#include <corio/to_thread.hpp>

namespace corio {

namespace detail {

struct FileState {
  FileState(int descriptor, std::string p) noexcept
      : fd(descriptor), path(std::move(p)), seekable(::lseek(fd, 0, SEEK_CUR) >= 0) {}
  FileState(const FileState&) = delete;
  FileState& operator=(const FileState&) = delete;
  ~FileState() {
    if (fd >= 0) ::close(fd);
  }

  int fd;
  const std::string path;
  const bool seekable;   // a regular file, not a FIFO or a tty
  bool closing = false;  // close() began: no new operation
  std::string carry;     // a cancelled read()'s bytes (invariant 3)
  Lock positional;       // invariant 2
  int offset_jobs = 0;   // pread/pwrite jobs on the pool
  Event offset_jobs_done;
};

}  // namespace detail

namespace {

using State = std::shared_ptr<detail::FileState>;
constexpr std::size_t kUnlimited = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kFirstChunk = 64 * 1024;

// A descriptor open_file's job owns until the loop takes it: a cancelled
// open_file drops the job's result, and with it closes the file.
struct OwnedFd {
  explicit OwnedFd(int f) noexcept : fd(f) {}
  OwnedFd(OwnedFd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  OwnedFd& operator=(OwnedFd&&) = delete;
  ~OwnedFd() {
    if (fd >= 0) ::close(fd);
  }
  int release() noexcept { return std::exchange(fd, -1); }
  int fd;
};

[[noreturn]] void bad_mode(std::string_view mode) {
  throw ValueError("invalid mode: '" + std::string(mode) +
                   "' (one of r, w, a, x, then + and b as wanted)");
}

// Python's open() modes as open(2) flags (see file.hpp).
int open_flags(std::string_view mode) {
  char kind = 0;
  bool plus = false, binary = false;
  for (char c : mode) {
    bool& seen = c == '+' ? plus : binary;
    if (c == 'r' || c == 'w' || c == 'a' || c == 'x') {
      if (kind != 0) bad_mode(mode);
      kind = c;
    } else if ((c == '+' || c == 'b') && !seen) {
      seen = true;
    } else {
      bad_mode(mode);
    }
  }
  int flags = O_CLOEXEC | (plus ? O_RDWR : kind == 'r' ? O_RDONLY : O_WRONLY);
  switch (kind) {
    case 'r': return flags;
    case 'w': return flags | O_CREAT | O_TRUNC;
    case 'a': return flags | O_CREAT | O_APPEND;
    case 'x': return flags | O_CREAT | O_EXCL;
    default: bad_mode(mode);
  }
}

OwnedFd open_fd(const std::string& path, int flags) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags, 0666);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw OSError(errno, "open", path);
  OwnedFd owned(fd);
  // open(2) lets O_RDONLY open a directory; Python's open() says EISDIR.
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw OSError(errno, "fstat", path);
  if (S_ISDIR(st.st_mode)) throw OSError(EISDIR, "open", path);
  return owned;
}

// How many bytes a read of `want` at `offset` (< 0: the position) should make
// room for first: for a regular file what is left of it (one more, so that the
// read seeing the end needs no second buffer); else 64 KiB. Two syscalls, so
// only when want is beyond 64 KiB.
std::size_t first_room(const detail::FileState& s, std::int64_t offset, std::size_t want) {
  if (want <= kFirstChunk) return want;
  struct stat st {};
  if (::fstat(s.fd, &st) != 0 || !S_ISREG(st.st_mode)) return kFirstChunk;
  const off_t at = offset < 0 ? ::lseek(s.fd, 0, SEEK_CUR) : off_t(offset);
  if (at < 0 || st.st_size < at) return kFirstChunk;
  return std::min(want, std::size_t(st.st_size - at) + 1);
}

// Up to `want` bytes at `offset` (< 0: at the position), fewer only at end of
// file. Memory follows what the file has, not what was asked for: the buffer
// is what is left of a regular file, else it grows by doubling from 64 KiB.
std::string read_bytes(const detail::FileState& s, std::int64_t offset, std::size_t want) {
  std::string out(first_room(s, offset, want), '\0');
  std::size_t got = 0;
  while (got < want) {
    if (got == out.size()) out.resize(std::min(want, std::max(kFirstChunk, 2 * got)));
    const std::size_t room = out.size() - got;
    const ssize_t n = offset < 0 ? ::read(s.fd, out.data() + got, room)
                                 : ::pread(s.fd, out.data() + got, room, offset + off_t(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw OSError(errno, offset < 0 ? "read" : "pread", s.path);
    if (n == 0) break;
    got += std::size_t(n);
  }
  out.resize(got);
  return out;
}

std::size_t write_bytes(const detail::FileState& s, std::int64_t offset, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const std::size_t left = bytes.size() - done;
    const ssize_t n = offset < 0 ? ::write(s.fd, bytes.data() + done, left)
                                 : ::pwrite(s.fd, bytes.data() + done, left, offset + off_t(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw OSError(errno, offset < 0 ? "write" : "pwrite", s.path);
    done += std::size_t(n);
  }
  return done;
}

State live(const State& s) {
  if (!s || s->closing) throw ValueError("I/O operation on closed file");
  return s;
}

std::int64_t checked_offset(std::uint64_t offset) {
  if (offset > std::uint64_t(std::numeric_limits<off_t>::max())) {
    throw ValueError("file offset out of range: " + std::to_string(offset));
  }
  return std::int64_t(offset);
}

// Takes the positional lock; ValueError if close() began meanwhile.
Coro<void> acquire_positional(State s) {
  co_await s->positional.acquire();
  if (s->closing) {
    s->positional.release();
    throw ValueError("I/O operation on closed file");
  }
}

// One positional job, shared by its awaiter, its done-callback and the job
// itself, which writes `result` on the pool (read on the loop only after the
// job is back: the executor's hand-over orders the two).
template <class R>
struct PositionalRun {
  using Result = std::conditional_t<std::is_void_v<R>, char, R>;
  Result result{};
  bool abandoned = false;  // its awaiter was cancelled
  bool ended = false;      // the job is back on the loop
  std::string kept;        // read(): the bytes taken from carry before the job
};

// What a cancelled positional job's result is for, once it is there; `done`
// is the job's future (an exception if the job threw).
template <class R>
using Abandoned = void (*)(detail::FileState&, Future<void>& done, PositionalRun<R>&);

template <class R, class Job>
auto run_job_into(std::shared_ptr<PositionalRun<R>> run, Job job) {
  return [run = std::move(run), job = std::move(job)]() mutable {
    if constexpr (std::is_void_v<R>) {
      job();
    } else {
      run->result = job();
    }
  };
}

// Runs job on the pool holding s->positional until it ends (invariant 2).
// When the awaiter is cancelled, on_abandoned gets the job's result as soon as
// both have happened, whichever comes first. The result travels in `run`, not
// in the future, so that it is moved, never copied (1 MiB reads).
template <class R, class Job>
Coro<R> run_positional(State s, Job job, Abandoned<R> on_abandoned, std::string kept = {}) {
  auto run = std::make_shared<PositionalRun<R>>();
  run->kept = std::move(kept);
  Future<void> fut;
  try {
    fut = get_running_loop().run_in_executor(nullptr, run_job_into<R>(run, std::move(job)));
  } catch (...) {  // no job: nothing holds the position, and carry is as it was
    s->carry = std::move(run->kept) + s->carry;
    s->positional.release();
    throw;
  }
  fut.add_done_callback([s, run, on_abandoned](Future<void> f) {
    run->ended = true;
    if (run->abandoned) on_abandoned(*s, f, *run);
    s->positional.release();
  });
  try {
    co_await shield(Future<void>(fut));
  } catch (const CancelledError&) {
    run->abandoned = true;
    if (run->ended) on_abandoned(*s, fut, *run);
    throw;
  }
  if constexpr (!std::is_void_v<R>) co_return std::move(run->result);
}

template <class R>
void nothing_to_keep(detail::FileState&, Future<void>&, PositionalRun<R>&) {}

// A cancelled read's bytes, after those it had taken from carry, are the next read's.
void keep_read(detail::FileState& s, Future<void>& done, PositionalRun<std::string>& run) {
  s.carry = std::move(run.kept);
  if (!done.exception()) s.carry += run.result;
}

// Runs an offset job (pread, pwrite) on the pool, counted for close().
template <class R, class Job>
Coro<R> run_at_offset(State s, Job job) {
  ++s->offset_jobs;
  Future<R> fut = get_running_loop().run_in_executor(nullptr, std::move(job));
  fut.add_done_callback([s](Future<R>) {
    if (--s->offset_jobs == 0) s->offset_jobs_done.set();
  });
  co_return co_await shield(std::move(fut));
}

}  // namespace

Coro<AsyncFile> open_file(std::string path, std::string mode) {
  const int flags = open_flags(mode);
  auto job = [path, flags] { return open_fd(path, flags); };
  OwnedFd fd = co_await to_thread(std::move(job));
  co_return AsyncFile(std::make_shared<detail::FileState>(fd.release(), std::move(path)));
}

const std::string& AsyncFile::path() const noexcept {
  static const std::string none;
  return s_ ? s_->path : none;
}

bool AsyncFile::closed() const noexcept { return !s_ || s_->closing; }

int AsyncFile::fileno() const { return live(s_)->fd; }

Coro<std::string> AsyncFile::read(std::int64_t n) {
  State s = live(s_);
  co_await acquire_positional(s);
  std::string head = std::exchange(s->carry, {});
  const std::size_t want = n < 0 ? kUnlimited : std::size_t(n);
  if (head.size() >= want) {  // carry alone answers it
    s->carry = head.substr(want);
    head.resize(want);
    s->positional.release();
    co_return head;
  }
  const std::size_t rest = want == kUnlimited ? kUnlimited : want - head.size();
  auto job = [s, rest] { return read_bytes(*s, -1, rest); };
  std::string tail = co_await run_positional<std::string>(s, std::move(job), keep_read, head);
  if (head.empty()) co_return std::move(tail);
  head += tail;
  co_return std::move(head);
}

Coro<std::string> AsyncFile::read_all() { return read(-1); }

Coro<std::size_t> AsyncFile::write(std::string bytes) {
  State s = live(s_);
  co_await acquire_positional(s);
  // Bytes a cancelled read took that no read has had yet come before where a
  // write goes: step back over them first (as Python's BufferedRandom does).
  // A FIFO's reads and writes are two streams: its carry stays for the next read.
  const off_t back = s->seekable ? off_t(std::exchange(s->carry, {}).size()) : 0;
  auto job = [s, back, b = std::move(bytes)] {
    if (back > 0 && ::lseek(s->fd, -back, SEEK_CUR) < 0) throw OSError(errno, "lseek", s->path);
    return write_bytes(*s, -1, b);
  };
  co_return co_await run_positional<std::size_t>(s, std::move(job), nothing_to_keep<std::size_t>);
}

Coro<void> AsyncFile::fsync() {
  State s = live(s_);
  co_await acquire_positional(s);
  auto job = [s] {
    if (::fsync(s->fd) != 0) throw OSError(errno, "fsync", s->path);
  };
  co_await run_positional<void>(s, std::move(job), nothing_to_keep<void>);
}

Coro<std::string> AsyncFile::pread(std::uint64_t offset, std::size_t n) {
  State s = live(s_);
  auto job = [s, off = checked_offset(offset), n] { return read_bytes(*s, off, n); };
  co_return co_await run_at_offset<std::string>(s, std::move(job));
}

Coro<std::size_t> AsyncFile::pwrite(std::uint64_t offset, std::string bytes) {
  State s = live(s_);
  auto job = [s, off = checked_offset(offset), b = std::move(bytes)] { return write_bytes(*s, off, b); };
  co_return co_await run_at_offset<std::size_t>(s, std::move(job));
}

Coro<void> AsyncFile::close() {
  if (closed()) co_return;
  State s = s_;
  s->closing = true;
  // Cancelled while waiting: the descriptor stays with the state, closed when
  // the last job lets go of it (invariant 1).
  int fd;
  {
    auto no_positional_job = co_await s->positional.scoped_lock();
    while (s->offset_jobs > 0) {
      s->offset_jobs_done.clear();
      co_await s->offset_jobs_done.wait();
    }
    fd = std::exchange(s->fd, -1);
  }
  auto job = [fd, path = s->path] {
    if (::close(fd) != 0 && errno != EINTR) throw OSError(errno, "close", path);
  };
  co_await to_thread(std::move(job));
}

}  // namespace corio
