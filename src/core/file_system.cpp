// The OS's file syscalls, unless a simulation stands in (see
// detail/file_system.hpp).
#include <unistd.h>

#include <cerrno>

#include <corio/detail/file_system.hpp>

namespace corio::detail {

namespace {

long result(long rc) noexcept { return rc < 0 ? -errno : rc; }

class OsFiles final : public FileSystem {
 public:
  long read(int fd, char* buf, std::size_t n, std::int64_t offset) noexcept override {
    return result(offset < 0 ? ::read(fd, buf, n) : ::pread(fd, buf, n, off_t(offset)));
  }
  long write(int fd, const char* data, std::size_t n, std::int64_t offset) noexcept override {
    return result(offset < 0 ? ::write(fd, data, n) : ::pwrite(fd, data, n, off_t(offset)));
  }
  int fsync(int fd) noexcept override { return static_cast<int>(result(::fsync(fd))); }
};

OsFiles os_files;
thread_local FileSystem* current = nullptr;

}  // namespace

FileSystem& file_system() noexcept { return current != nullptr ? *current : os_files; }

FileSystem& os_file_system() noexcept { return os_files; }

FileSystem* replace_file_system(FileSystem* f) noexcept {
  FileSystem* old = current;
  current = f;
  return old;
}

}  // namespace corio::detail
