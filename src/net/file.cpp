// AsyncFile (see file.hpp): each job natively in the loop's backend when it
// has file I/O (io_uring) and the file is regular, else on the default
// thread pool.
//
// Invariants, all loop-side state touched on the loop thread only:
// 1. A job, on the pool or in the ring, holds the FileState (shared_ptr), so
//    the descriptor it uses cannot be closed, nor its number reused, under
//    it: close() waits for every job, and a state dropped without close()
//    closes the descriptor when the last job lets go of it.
// 2. `positional` is held from the start of a positional job to its end on
//    the loop (a done-callback releases it), not to the end of its awaiter:
//    a cancelled read or write still occupies the position until it is done.
// 3. `carry` holds bytes a cancelled read() read; only the holder of
//    `positional` touches it, so the next read serves them first, in order.
// 4. A native job owns its buffer and is owned by the backend from submit to
//    complete or discard (backend.hpp's submit_file contract), so the kernel
//    never writes into freed memory, whatever happened to its awaiter.
//
// Both paths share everything above the job (the lock, carry, the shields),
// so cancellation means the same on each; a job is described once (FileIo) and
// either path carries it out with the same memory rule and the same errors.
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

#include <corio/c_string.hpp>
#include <corio/detail/file_system.hpp>
#include <corio/errors.hpp>
#include <corio/event.hpp>
#include <corio/event_loop.hpp>
#include <corio/lock.hpp>
#include <corio/shield.hpp>
#include <corio/to_thread.hpp>

#include "net/file_job.hpp"

namespace corio {

namespace detail {

namespace {
constexpr std::size_t kFirstChunk = 64 * 1024;
}  // namespace

// How many bytes a read of `want` at `offset` (< 0: the position) should make
// room for first: for a regular file what is left of it (one more, so that the
// read seeing the end needs no second buffer); else 64 KiB. Two syscalls, so
// only when want is beyond 64 KiB.
std::size_t first_room(const FileState& s, std::int64_t offset, std::size_t want) {
  if (want <= kFirstChunk) return want;
  struct stat st {};
  if (::fstat(s.fd, &st) != 0 || !S_ISREG(st.st_mode)) return kFirstChunk;
  const off_t at = offset < 0 ? ::lseek(s.fd, 0, SEEK_CUR) : off_t(offset);
  if (at < 0 || st.st_size < at) return kFirstChunk;
  return std::min(want, std::size_t(st.st_size - at) + 1);
}

// A read's buffer once the bytes filled it: it doubles from 64 KiB, up to want.
void grow_if_full(std::string& out, std::size_t got, std::size_t want) {
  if (got == out.size()) out.resize(std::min(want, std::max(kFirstChunk, 2 * got)));
}

const char* file_verb(bool reading, std::int64_t offset) {
  if (reading) return offset < 0 ? "read" : "pread";
  return offset < 0 ? "write" : "pwrite";
}

void step_back(const FileState& s, FileIo& io) {
  if (io.back > 0 && ::lseek(s.fd, -std::exchange(io.back, 0), SEEK_CUR) < 0) {
    throw OSError(errno, "lseek", s.path);
  }
}

}  // namespace detail

namespace {

using State = std::shared_ptr<detail::FileState>;
using detail::FileIo;
using detail::JobRun;
constexpr std::size_t kUnlimited = std::numeric_limits<std::size_t>::max();

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

// Up to `want` bytes at `offset` (< 0: at the position), fewer only at end of
// file. Memory follows what the file has, not what was asked for: the buffer
// is what is left of a regular file, else it grows by doubling from 64 KiB.
std::string read_bytes(const detail::FileState& s, std::int64_t offset, std::size_t want) {
  std::string out(detail::first_room(s, offset, want), '\0');
  std::size_t got = 0;
  while (got < want) {
    detail::grow_if_full(out, got, want);
    const std::size_t room = out.size() - got;
    const long n = corio::detail::file_system().read(s.fd, out.data() + got, room,
                                                     offset < 0 ? offset : offset + off_t(got));
    if (n == -EINTR) continue;
    if (n < 0) throw OSError(static_cast<int>(-n), detail::file_verb(true, offset), s.path);
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
    const long n = corio::detail::file_system().write(s.fd, bytes.data() + done, left,
                                                      offset < 0 ? offset : offset + off_t(done));
    if (n == -EINTR) continue;
    if (n < 0) throw OSError(static_cast<int>(-n), detail::file_verb(false, offset), s.path);
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

// The job as blocking syscalls, on a pool thread.
template <class R>
R run_blocking(const detail::FileState& s, FileIo& io) {
  if constexpr (std::is_same_v<R, std::string>) {
    return read_bytes(s, io.offset, io.want);
  } else if constexpr (std::is_same_v<R, std::size_t>) {
    detail::step_back(s, io);
    return write_bytes(s, io.offset, io.bytes);
  } else if (const int rc = corio::detail::file_system().fsync(s.fd); rc != 0) {
    throw OSError(-rc, "fsync", s.path);
  }
}

// Starts the job natively or on the pool (see the top); its future completes
// on the loop when the job is over, its result then in run.
template <class R>
Future<void> start(const State& s, const std::shared_ptr<JobRun<R>>& run, FileIo io) {
  EventLoop& loop = get_running_loop();
  Future<void> fut;
  if (s->native && detail::start_native<R>(loop, s, run, io, fut)) return fut;
  return loop.run_in_executor(nullptr, [s, run, io = std::move(io)]() mutable {
    if constexpr (std::is_void_v<R>) {
      run_blocking<R>(*s, io);
    } else {
      run->result = run_blocking<R>(*s, io);
    }
  });
}

// What a cancelled positional job's result is for, once it is there; `done`
// is the job's future (an exception if the job threw).
template <class R>
using Abandoned = void (*)(detail::FileState&, Future<void>& done, JobRun<R>&);

// Runs the job holding s->positional until it ends (invariant 2). When the
// awaiter is cancelled, on_abandoned gets the job's result as soon as both
// have happened, whichever comes first. The result travels in `run`, not in
// the future, so that it is moved, never copied (1 MiB reads).
template <class R>
Coro<R> run_positional(State s, FileIo io, Abandoned<R> on_abandoned, std::string kept = {}) {
  auto run = std::make_shared<JobRun<R>>();
  run->kept = std::move(kept);
  Future<void> fut;
  try {
    fut = start<R>(s, run, std::move(io));
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
void nothing_to_keep(detail::FileState&, Future<void>&, JobRun<R>&) {}

// A cancelled read's bytes, after those it had taken from carry, are the next read's.
void keep_read(detail::FileState& s, Future<void>& done, JobRun<std::string>& run) {
  s.carry = std::move(run.kept);
  if (!done.exception()) s.carry += run.result;
}

// Runs an offset job (pread, pwrite), counted for close().
template <class R>
Coro<R> run_at_offset(State s, FileIo io) {
  auto run = std::make_shared<JobRun<R>>();
  Future<void> fut = start<R>(s, run, std::move(io));
  ++s->offset_jobs;
  fut.add_done_callback([s](Future<void>) {
    if (--s->offset_jobs == 0) s->offset_jobs_done.set();
  });
  co_await shield(std::move(fut));
  co_return std::move(run->result);
}

}  // namespace

Coro<AsyncFile> open_file(std::string path, std::string mode) {
  check_c_string(path, "a file path");  // open(2) would open what precedes it
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
  // Named first: a temporary holding a std::string inside a co_await trips g++ 12.
  FileIo io{-1, rest, {}, 0};
  std::string tail = co_await run_positional<std::string>(s, std::move(io), keep_read, head);
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
  FileIo io{-1, 0, std::move(bytes), back};
  co_return co_await run_positional<std::size_t>(s, std::move(io), nothing_to_keep<std::size_t>);
}

Coro<void> AsyncFile::fsync() {
  State s = live(s_);
  co_await acquire_positional(s);
  FileIo io;
  co_await run_positional<void>(s, std::move(io), nothing_to_keep<void>);
}

Coro<std::string> AsyncFile::pread(std::uint64_t offset, std::size_t n) {
  State s = live(s_);
  FileIo io{checked_offset(offset), n, {}, 0};
  co_return co_await run_at_offset<std::string>(s, std::move(io));
}

Coro<std::size_t> AsyncFile::pwrite(std::uint64_t offset, std::string bytes) {
  State s = live(s_);
  FileIo io{checked_offset(offset), 0, std::move(bytes), 0};
  co_return co_await run_at_offset<std::size_t>(s, std::move(io));
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
