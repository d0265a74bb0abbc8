/// \file
/// corio::open_file and corio::AsyncFile: files without blocking the loop
/// (Python's aiofiles).
///
/// <!-- doc: body -->
///     corio::AsyncFile f = co_await corio::open_file("data.bin", "rb");
///     std::string head = co_await f.read(4096);
///     std::string block = co_await f.pread(1 << 20, 4096);
///     co_await f.close();
///
/// Files have no readiness (epoll says a regular file is always ready), so an
/// operation runs where it cannot block the loop:
/// - on io_uring (RunOptions::backend, CORIO_BACKEND=io_uring), read, read_all,
///   write, pread, pwrite and fsync on a regular file go to the loop's ring
///   (IORING_OP_READ, WRITE, FSYNC), with no thread involved;
/// - on epoll, and for any other file (a FIFO or a tty, whose read may block
///   for ever), each is blocking syscalls on the loop's default thread pool,
///   the one to_thread uses;
/// - open_file and close are the pool's on either backend: each happens once
///   per file, and a path's lookup is work io_uring would hand to a thread
///   of its own anyway.
/// Both paths behave the same (below); only the cost differs. Suspends: every
/// operation but the accessors, until its syscalls are done. Resumed by: the
/// ring's completion or the pool's, through the loop.
///
/// Modes, as Python's open(): exactly one of "r" (read; the file must exist),
/// "w" (write; created or truncated), "a" (append; created), "x" (write; must
/// not exist), then "+" for reading and writing, and "b", accepted and meaning
/// nothing (bytes are all corio has): "rb", "r+", "w+b", "ab", "x"... Anything
/// else is a ValueError.
///
/// Errors: OSError (a std::system_error with the errno, plus the path), e.g.
/// ENOENT, EACCES, EISDIR (a directory opened in any mode, as Python);
/// ValueError for a bad mode or an operation on a closed file.
///
/// Positional operations -- read, read_all, write, fsync, close -- use the
/// file's position and run one at a time, in call order. pread and pwrite take
/// an offset and run concurrently with each other and with those.
///
/// Cancellation: a syscall on the pool (or a request in the ring) is not
/// stopped, so a cancelled operation's awaiter gets CancelledError at once
/// while the syscall finishes; the file stays usable. What that syscall did is not lost: a
/// cancelled read's bytes are handed to the next read (as a cancelled socket
/// read's are), a cancelled write is written, and the next positional
/// operation starts after it. A cancelled pread's bytes are dropped (nothing
/// moved). close() waits for every operation still running.
///
/// Buffers are owned by the operation: write() and pwrite() take their bytes
/// by value and reads return a new string, so that the ring serves the same
/// interface, the buffer alive until the kernel is done with it, even when
/// its awaiter was cancelled or the loop closed meanwhile.
///
/// An AsyncFile is move-only and loop-affine; destroying it without close()
/// closes the descriptor once the operations still running have ended.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <corio/coro.hpp>
#include <corio/os_error.hpp>

namespace corio {

namespace detail {
struct FileState;
}
class AsyncFile;

/// Opens path in mode ("r", "w", "a", "x", with "+" and "b"; see the top of
/// file.hpp) on the default thread pool. Throws OSError or ValueError.
Coro<AsyncFile> open_file(std::string path, std::string mode = "r");

/// An open file whose operations run off the loop (see the top of file.hpp).
class AsyncFile {
 public:
  /// Moves the open file (the moved-from one is closed).
  AsyncFile(AsyncFile&&) noexcept = default;
  /// Moves the open file (the moved-from one is closed).
  AsyncFile& operator=(AsyncFile&&) noexcept = default;
  ~AsyncFile() = default;

  /// The path it was opened with.
  const std::string& path() const noexcept;
  /// True once close() began (or for a moved-from file).
  bool closed() const noexcept;
  /// The descriptor; ValueError once closed.
  int fileno() const;

  /// Up to n bytes from the position (fewer only at end of file; "" there);
  /// n < 0 reads to the end of the file.
  Coro<std::string> read(std::int64_t n = -1);
  /// From the position to the end of the file.
  Coro<std::string> read_all();
  /// Writes all of bytes at the position (at the end in "a" modes); returns
  /// how many, bytes.size().
  Coro<std::size_t> write(std::string bytes);
  /// Up to n bytes at offset (fewer only at end of file); the position stays.
  Coro<std::string> pread(std::uint64_t offset, std::size_t n);
  /// Writes all of bytes at offset; returns bytes.size(). The position stays.
  Coro<std::size_t> pwrite(std::uint64_t offset, std::string bytes);
  /// fsync(2): what was written is on the device.
  Coro<void> fsync();
  /// Closes the file once its pending operations have ended. Closing a
  /// closed file does nothing, as in Python.
  Coro<void> close();

 private:
  explicit AsyncFile(std::shared_ptr<detail::FileState> s) noexcept : s_(std::move(s)) {}
  friend Coro<AsyncFile> open_file(std::string path, std::string mode);

  std::shared_ptr<detail::FileState> s_;
};

}  // namespace corio
