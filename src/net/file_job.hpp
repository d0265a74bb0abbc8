// AsyncFile's jobs, shared by file.cpp (the operations, and the pool path)
// and file_native.cpp (the ring path): the file's state, what a job does,
// where its result goes. The invariants are at the top of file.cpp.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include <sys/stat.h>
#include <sys/types.h>

#include <corio/detail/file_op.hpp>
#include <corio/event.hpp>
#include <corio/future.hpp>
#include <corio/lock.hpp>

namespace corio {

class EventLoop;

namespace detail {

struct FileState {
  FileState(int descriptor, std::string p) noexcept
      : fd(descriptor),
        path(std::move(p)),
        seekable(::lseek(fd, 0, SEEK_CUR) >= 0),
        native(is_regular(descriptor)) {}
  FileState(const FileState&) = delete;
  FileState& operator=(const FileState&) = delete;
  ~FileState() {
    if (fd >= 0) ::close(fd);
  }

  int fd;
  const std::string path;
  const bool seekable;  // a regular file, not a FIFO or a tty
  // Jobs go to the backend: a regular file (a FIFO's read may block for
  // ever, and a ring request with it) whose loop has not said it cannot.
  bool native;
  bool closing = false;  // close() began: no new operation
  std::string carry;     // a cancelled read()'s bytes (invariant 3)
  Lock positional;       // invariant 2
  int offset_jobs = 0;   // pread/pwrite jobs not yet over
  Event offset_jobs_done;

  static bool is_regular(int fd) noexcept {
    struct stat st {};
    return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  }
};

// What one job does, whichever path runs it. Its kind is its result type R:
// std::string a read, std::size_t a write, void an fsync.
struct FileIo {
  std::int64_t offset = -1;  // < 0: at the file position
  std::size_t want = 0;      // read: at most this many bytes
  std::string bytes;         // write: all of these
  off_t back = 0;            // write: first step the position back this far (carry)
};

// One job's result, shared by its awaiter, its done-callback and the job,
// which writes `result` (on the pool, or in the ring's completion) before it
// completes the job's future; read on the loop only after that (on the pool
// the executor's hand-over orders the two).
template <class R>
struct JobRun {
  using Result = std::conditional_t<std::is_void_v<R>, char, R>;
  Result result{};
  bool abandoned = false;  // positional: its awaiter was cancelled
  bool ended = false;      // positional: the job is back on the loop
  std::string kept;        // read(): the bytes taken from carry before the job
};

// The memory rule both paths read by (file.cpp): the first buffer for a
// read of `want` at `offset` (< 0: the position), and how it grows once full.
std::size_t first_room(const FileState& s, std::int64_t offset, std::size_t want);
void grow_if_full(std::string& out, std::size_t got, std::size_t want);
// "read", "pread", "write" or "pwrite", for an OSError.
const char* file_verb(bool reading, std::int64_t offset);
// A write's step back over carry (io.back), made once.
void step_back(const FileState& s, FileIo& io);

// Hands the job to loop's backend (file_native.cpp); false, with io as it
// was but for the step back (made), when the backend has no native file
// I/O, which s then remembers. Else `out` completes on the loop once the job
// is over, its result in run.
template <class R>
bool start_native(EventLoop& loop, const std::shared_ptr<FileState>& s,
                  const std::shared_ptr<JobRun<R>>& run, FileIo& io, Future<void>& out);

}  // namespace detail
}  // namespace corio
