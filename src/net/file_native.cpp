// AsyncFile's native path: a job as requests to the loop's backend
// (backend.hpp's submit_file contract; file.cpp's invariants 1 and 4).
//
// A NativeJob is the FileOp the backend holds, plus what the kernel uses
// (the buffer) and what the completion needs (the state, the result's
// place, the future). It lives from its first request to its last
// completion, or to the backend's discard at teardown, whatever happens to
// its awaiter meanwhile: a cancelled read's bytes still land in the job and
// reach carry through the done-callback, as on the pool.
//
// Short reads and writes go on from where they stopped, as read_bytes and
// write_bytes do on the pool, until done or end of file, under the same
// memory rule (the buffer is what is left of the file, then doubles).
#include <cerrno>
#include <exception>

#include "net/file_job.hpp"
#include <corio/event_loop.hpp>
#include <corio/os_error.hpp>

namespace corio::detail {

namespace {

using State = std::shared_ptr<FileState>;

// At most this much per request: a SQE's length is 32 bits, and a longer job
// goes on as a short one does.
constexpr std::size_t kMaxRequest = std::size_t(1) << 30;

template <class R>
constexpr FileOp::Kind kind_of() {
  if constexpr (std::is_same_v<R, std::string>) return FileOp::Kind::read;
  if constexpr (std::is_same_v<R, std::size_t>) return FileOp::Kind::write;
  return FileOp::Kind::fsync;
}

template <class R>
struct NativeJob final : FileOp {
  NativeJob(EventLoop& l, State st, std::shared_ptr<JobRun<R>> r, FileIo& io)
      : loop(l),
        s(std::move(st)),
        run(std::move(r)),
        done(l.create_future<void>()),
        first(io.offset),
        want(io.want) {
    fd = s->fd;
    kind = kind_of<R>();
    complete = &completed;
    discard = &discarded;
    if constexpr (std::is_same_v<R, std::string>) bytes.resize(first_room(*s, first, want));
    if constexpr (std::is_same_v<R, std::size_t>) {
      bytes = std::move(io.bytes);
      want = bytes.size();
    }
  }

  // Points the request at what is left to move.
  void aim() {
    if constexpr (std::is_same_v<R, std::string>) grow_if_full(bytes, moved, want);
    buf = bytes.data() + moved;
    len = static_cast<std::uint32_t>(std::min(bytes.size() - moved, kMaxRequest));
    offset = first < 0 ? -1 : first + static_cast<std::int64_t>(moved);
  }

  // Counts a result in; true when bytes are left to move (the request goes
  // again). 0 bytes is the end of the file.
  bool more(int res) {
    if (res == -EINTR || res == -EAGAIN) return true;
    if (res < 0) {
      throw OSError(-res, std::is_void_v<R> ? "fsync" : file_verb(kind == Kind::read, first),
                    s->path);
    }
    moved += static_cast<std::size_t>(res);
    return !std::is_void_v<R> && res > 0 && moved < want;
  }

  static void completed(FileOp& op, int res) noexcept {
    auto* j = static_cast<NativeJob*>(&op);
    j->loop.io().file_op_done();
    try {
      if (j->more(res)) {
        j->aim();
        // The backend took this job's first request, so it takes this one (contract 1).
        (void)j->loop.io().submit_file(*j);
        return;
      }
      if constexpr (std::is_same_v<R, std::string>) {
        j->bytes.resize(j->moved);
        j->run->result = std::move(j->bytes);
      } else if constexpr (std::is_same_v<R, std::size_t>) {
        j->run->result = j->moved;
      }
      j->done.set_result();
    } catch (...) {
      j->done.set_exception(std::current_exception());
    }
    delete j;
  }

  // The loop is going away: the job's memory goes with the backend's last
  // look at it, and its future (with its awaiters, all gone) stays pending.
  static void discarded(FileOp& op) noexcept { delete static_cast<NativeJob*>(&op); }

  EventLoop& loop;
  const State s;  // invariant 1
  const std::shared_ptr<JobRun<R>> run;
  Future<void> done;         // completed when the whole job is
  const std::int64_t first;  // the first byte's offset, -1: the position
  std::size_t want;          // read: at most this many; write: all of bytes
  std::size_t moved = 0;     // bytes read or written so far
  std::string bytes;         // read: what came; write: what goes
};

}  // namespace

template <class R>
bool start_native(EventLoop& loop, const State& s, const std::shared_ptr<JobRun<R>>& run,
                  FileIo& io, Future<void>& out) {
  if constexpr (std::is_same_v<R, std::size_t>) step_back(*s, io);
  auto job = std::make_unique<NativeJob<R>>(loop, s, run, io);
  job->aim();
  if (!loop.io().submit_file(*job)) {
    s->native = false;
    if constexpr (std::is_same_v<R, std::size_t>) io.bytes = std::move(job->bytes);
    return false;
  }
  out = job.release()->done;
  return true;
}

template bool start_native<std::string>(EventLoop&, const State&,
                                        const std::shared_ptr<JobRun<std::string>>&, FileIo&,
                                        Future<void>&);
template bool start_native<std::size_t>(EventLoop&, const State&,
                                        const std::shared_ptr<JobRun<std::size_t>>&, FileIo&,
                                        Future<void>&);
template bool start_native<void>(EventLoop&, const State&, const std::shared_ptr<JobRun<void>>&,
                                 FileIo&, Future<void>&);

}  // namespace corio::detail
