// A file as a message body, for the server's static files and file
// responses and the client's form parts: opened with the status a failure
// maps to, and its Content-Type by extension (case-insensitive; unknown
// extensions are application/octet-stream).
#pragma once

#include <cstddef>
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

// A file's body is read in pieces of at most this size.
inline constexpr std::size_t kFilePiece = 64 * 1024;

// Buffers for those pieces, recycled on the thread: a fresh std::string is
// zero-filled before pread overwrites it (6% of an h2c 64 KiB answer's CPU,
// perf), and a 64 KiB block freed at the heap's top goes back to the kernel
// and is faulted in again by the next answer (5%). Their users read a piece
// only as it goes out (HTTP/2: H2FileReader, a pass's worth at most per
// connection), so a loop needs one or two at a time: at most kSparePieces
// wait (256 KiB per thread), and a burst of large answers does not pin its
// peak.
inline constexpr std::size_t kSparePieces = 4;
// Nor does a loop that has gone idle: spares that no answer took for this
// long are freed (body_file.cpp), as an idle connection frees its buffers.
inline constexpr double kSpareLinger = 1.0;  // seconds, on the loop's clock
// A string of kFilePiece bytes, to be overwritten: a spare one's bytes are
// whatever its last piece left.
std::string take_piece_buffer();
// Keeps `bytes`' storage as a spare if it is a piece buffer (its capacity is
// a piece's) and there is room; frees it otherwise. A piece cut short costs
// the fill of its missing tail (std::string cannot grow uninitialised).
void recycle_piece(std::string&& bytes) noexcept;
// For tests: the spares this thread holds.
std::size_t spare_pieces() noexcept;

}  // namespace corio::http::detail
