// A file as a message body, for the server's static files and file
// responses and the client's form parts: opened with the status a failure
// maps to, and its Content-Type by extension (case-insensitive; unknown
// extensions are application/octet-stream).
#pragma once

#include <cstdint>
#include <ctime>
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
  std::time_t mtime() const noexcept { return mtime_; }  // seconds, for Last-Modified and ETag

 private:
  int fd_ = -1;
  int status_ = 200;
  std::uint64_t size_ = 0;
  std::time_t mtime_ = 0;
};

std::string_view content_type_for(std::string_view path) noexcept;

}  // namespace corio::http::detail
