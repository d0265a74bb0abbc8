/// \file
/// corio::OSError: an OS error about a file, as Python's OSError with its
/// filename. A std::system_error, so code() keeps the errno and
/// `catch (const std::system_error&)` catches it as it catches socket errors.
#pragma once

#include <string>
#include <system_error>
#include <utility>

namespace corio {

/// An errno from an operation on a file, with the file's path. what() is
/// "OP 'PATH': strerror", e.g. "open 'data.bin': No such file or directory".
class OSError : public std::system_error {
 public:
  /// errno err, from operation op ("open", "read", ...) on filename.
  OSError(int err, const std::string& op, std::string filename)
      : std::system_error(err, std::generic_category(), op + " '" + filename + "'"),
        filename_(std::move(filename)) {}
  /// The path the failed operation was about.
  const std::string& filename() const noexcept { return filename_; }

 private:
  std::string filename_;
};

}  // namespace corio
