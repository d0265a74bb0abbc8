// A file as a message body (see body_file.hpp).
#include "http/wire/body_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <memory>
#include <utility>

#include <sys/stat.h>

#include <corio/event_loop.hpp>
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

// The sweep that frees the spares once the loop has gone idle: one timer per
// kSpareLinger while answers keep taking pieces, none while no spare waits.
// Trivially destructible, so that a sweep the loop drops unrun (the loop
// closed) can still clear `armed` late in the thread's teardown.
struct Sweep {
  bool armed = false;
  bool taken = false;           // a piece was taken since the sweep was armed
  std::uint64_t generation = 0;  // of the armed sweep
};
constinit thread_local Sweep sweep_state;

void free_spares() noexcept {
  Spares& s = spares();
  while (s.count != 0) std::string().swap(s.pieces[--s.count]);
}

void arm_sweep(EventLoop& loop);

// A sweep's callback: freed with it, run or not, it disarms (unless a newer
// sweep has been armed since).
struct SweepCall {
  struct Disarm {
    explicit Disarm(std::uint64_t g) noexcept : generation(g) {}
    Disarm(const Disarm&) = delete;  // a copy's end must not disarm
    Disarm& operator=(const Disarm&) = delete;
    ~Disarm() {
      if (sweep_state.generation == generation) sweep_state.armed = false;
    }
    std::uint64_t generation;
  };
  std::shared_ptr<Disarm> disarm;
  EventLoop* loop;

  void operator()() const {
    sweep_state.armed = false;
    if (!std::exchange(sweep_state.taken, false)) {
      free_spares();
      return;
    }
    arm_sweep(*loop);
  }
};

void arm_sweep(EventLoop& loop) {
  Sweep& w = sweep_state;
  w.armed = true;
  w.taken = false;
  auto disarm = std::make_shared<SweepCall::Disarm>(++w.generation);
  loop.call_later(std::chrono::duration<double>(kSpareLinger), SweepCall{std::move(disarm), &loop});
}

}  // namespace

std::string take_piece_buffer() {
  Spares& s = spares();
  sweep_state.taken = true;
  if (s.count == 0) return std::string(kFilePiece, '\0');
  return std::exchange(s.pieces[--s.count], {});
}

// A piece given back outside a running loop is freed: no sweep could free it.
void recycle_piece(std::string&& bytes) noexcept {
  std::string piece = std::move(bytes);
  Spares& s = spares();
  EventLoop* loop = corio::detail::tls_running_loop;
  if (piece.capacity() != kFilePiece || s.count == kSparePieces || loop == nullptr) return;
  if (!sweep_state.armed) {
    try {
      arm_sweep(*loop);
    } catch (...) {  // no memory for the timer: keep no spare then
      sweep_state.armed = false;
      return;
    }
  }
  piece.resize(kFilePiece);  // within its capacity: no allocation
  s.pieces[s.count++] = std::move(piece);
}

std::size_t spare_pieces() noexcept { return spares().count; }

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
