// A file as a message body (see body_file.hpp).
#include "http/wire/body_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <utility>

#include <sys/stat.h>

#include <corio/http/headers.hpp>

namespace corio::http::detail {

OpenFile::OpenFile(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd_ >= 0 && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
    size_ = static_cast<std::uint64_t>(st.st_size);
    mtime_ = st.st_mtim.tv_sec;
    return;
  }
  const int err = fd_ < 0 ? errno : 0;
  status_ = err == ENOENT || err == ENOTDIR ? 404 : (err == 0 || err == EACCES) ? 403 : 500;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// A fixed array, not a vector: giving back never allocates.
struct Spares {
  std::array<std::string, kSparePieces> pieces;
  std::size_t count = 0;
};

Spares& spares() noexcept {
  thread_local Spares s;
  return s;
}

}  // namespace

std::string take_piece_buffer() {
  Spares& s = spares();
  if (s.count == 0) return std::string(kFilePiece, '\0');
  return std::exchange(s.pieces[--s.count], {});
}

void recycle_piece(std::string&& bytes) noexcept {
  std::string piece = std::move(bytes);
  Spares& s = spares();
  if (piece.capacity() != kFilePiece || s.count == kSparePieces) return;
  piece.resize(kFilePiece);  // within its capacity: no allocation
  s.pieces[s.count++] = std::move(piece);
}

std::string_view content_type_for(std::string_view path) noexcept {
  struct Type {
    std::string_view ext, type;
  };
  static constexpr Type kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".htm", "text/html; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".ico", "image/x-icon"},
      {".wasm", "application/wasm"},
      {".pdf", "application/pdf"},
      {".xml", "application/xml"},
      {".webp", "image/webp"},
  };
  const std::size_t dot = path.rfind('.');
  if (dot != std::string_view::npos && path.find('/', dot) == std::string_view::npos) {
    const std::string_view ext = path.substr(dot);
    for (const Type& t : kTypes) {
      if (iequals(t.ext, ext)) return t.type;
    }
  }
  return "application/octet-stream";
}

}  // namespace corio::http::detail
