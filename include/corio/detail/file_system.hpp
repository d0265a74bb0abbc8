// The calls that move a file's bytes (read, write, fsync) for corio's files
// on the thread pool (AsyncFile; net/file.cpp), behind one interface, so that
// a simulation (corio::testing::Simulation) can put a faulty disk in front of
// the OS's: short counts, EIO, ENOSPC, a failing fsync. Opening and closing
// stay the OS's. The native io_uring path does not come here: a simulation's
// backend has none, so there every file operation does.
#pragma once

#include <cstddef>
#include <cstdint>

namespace corio::detail {

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // As read(2)/pread(2) (offset < 0: at the file's position) and
  // write(2)/pwrite(2): a count, else -errno.
  virtual long read(int fd, char* buf, std::size_t n, std::int64_t offset) noexcept = 0;
  virtual long write(int fd, const char* data, std::size_t n, std::int64_t offset) noexcept = 0;
  // 0, else -errno.
  virtual int fsync(int fd) noexcept = 0;
};

// This thread's: the OS's, unless a simulation stands in.
FileSystem& file_system() noexcept;
// The OS's, whoever stands in (what a simulated disk passes on to).
FileSystem& os_file_system() noexcept;
// Makes f this thread's (null: the OS's again); returns the one it replaces.
FileSystem* replace_file_system(FileSystem* f) noexcept;

}  // namespace corio::detail
