// Files on disk for responses: opening with the status a failure maps to,
// Content-Type by extension, and the safe join of a URL path under a root.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace corio::http::detail {

// An open regular file, closed on destruction; status 200, or 404 / 403 /
// 500 for what went wrong opening it.
class OpenFile {
 public:
  explicit OpenFile(const std::string& path);
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile();
  int fd() const noexcept { return fd_; }
  int status() const noexcept { return status_; }
  std::uint64_t size() const noexcept { return size_; }

 private:
  int fd_ = -1;
  int status_ = 200;
  std::uint64_t size_ = 0;
};

std::string_view content_type_for(std::string_view path) noexcept;

}  // namespace corio::http::detail
