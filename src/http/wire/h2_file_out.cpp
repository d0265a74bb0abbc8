// H2Output's file payloads (see h2_glue.hpp): DATA frames of a file sent by
// sendfile(2) on a plain socket, or read into the pass's storage.
//
// Over h2c a 64 KiB answer read with pread cost two copies of its bytes
// (the file's into ours, ours into the socket), 30% of the server's CPU at
// `h2load -c100 -m1`; sendfile lends the page cache's pages to the socket,
// as HTTP/1.1 does. Neither the flow control nor the loop waits on it: a
// frame's bytes go by sendfile only while the writer holds nothing (they
// must not overtake it), each frame header just before its payload
// (MSG_MORE: one segment for both), and whatever the socket does not take
// at once is read and handed to the writer, which sends it in the
// background as it does every other frame. So a pass never outlives its
// synchronous flush, and neither does its use of the file's descriptor.
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <exception>
#include <system_error>
#include <utility>

#include "http/wire/body_file.hpp"
#include "http/wire/h2_glue.hpp"

namespace corio::http::detail {

namespace {

// iovecs per direct send: what gathers before a frame of a file is its
// header, and the frames of other streams since the last file frame.
constexpr std::size_t kDirectIov = 64;

// As much of `views` as the socket takes now, announcing more to come.
std::size_t send_direct(int sock, const std::vector<std::string_view>& views) {
  std::array<iovec, kDirectIov> iov{};
  const std::size_t count = std::min(views.size(), kDirectIov);
  for (std::size_t i = 0; i < count; ++i) {
    iov[i] = {const_cast<char*>(views[i].data()), views[i].size()};
  }
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = count;
  ssize_t n = 0;
  do {
    n = ::sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT | MSG_MORE);
  } while (n < 0 && errno == EINTR);
  return n < 0 ? 0 : static_cast<std::size_t>(n);  // an error: the writer meets it again
}

// As much of the range as the socket takes now. sendfile has no
// MSG_NOSIGNAL: a peer gone is EPIPE because the loop ignores SIGPIPE.
std::size_t sendfile_some(int sock, int fd, std::uint64_t offset, std::size_t n) {
  auto at = static_cast<off_t>(offset);
  std::size_t sent = 0;
  while (sent < n) {
    const ssize_t got = ::sendfile(sock, fd, &at, n - sent);
    if (got > 0) {
      sent += static_cast<std::size_t>(got);
    } else if (got == 0 || errno != EINTR) {
      break;  // the file shrank, or the socket is full or broken: the writer's turn
    }
  }
  return sent;
}

}  // namespace

std::string_view H2Output::pread(int fd, std::uint64_t offset, std::size_t n) {
  n = std::min(n, kFilePiece);
  if (reads_.empty() || kFilePiece - read_used_ < n) {
    reads_.push_back(take_piece_buffer());
    read_used_ = 0;
  }
  char* at = reads_.back().data() + read_used_;
  const ssize_t got = ::pread(fd, at, n, static_cast<off_t>(offset));
  if (got < 0) throw std::system_error(errno, std::generic_category(), "pread");
  read_used_ += static_cast<std::size_t>(got);
  return {at, static_cast<std::size_t>(got)};
}

// The file's length is asked for each frame, as a read would find its end:
// a frame's header promises its bytes before sendfile sends them.
std::size_t H2Output::take_file(int fd, std::uint64_t offset, std::size_t n, bool by_sendfile) {
  if (!by_sendfile) {
    const std::string_view got = pread(fd, offset, n);
    taken_ = {got.data(), 0, got.size()};
    return got.size();
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::system_error(errno, std::generic_category(), "fstat");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  n = size > offset ? static_cast<std::size_t>(std::min<std::uint64_t>({n, kFilePiece, size - offset})) : 0;
  taken_ = {nullptr, 0, n, fd, offset};
  return n;
}

void H2Output::add_taken_file() {
  const Piece p = std::exchange(taken_, {nullptr, 0, 0});
  if (p.fd < 0) {
    refer({p.data, p.size});
    return;
  }
  if (pieces_.empty() && !arena_.empty()) pieces_.push_back({nullptr, 0, arena_.size()});
  pieces_.push_back(p);
  size_ += p.size;
}

// Direct while the writer is empty, so that the file's bytes may follow
// these in the socket; what the socket does not take goes to the writer.
void H2Output::send_before_file(StreamWriter& w, std::vector<std::string_view>& views) {
  if (views.empty()) return;
  const int sock = w.fileno();
  std::size_t sent = sock >= 0 && w.is_flushed() ? send_direct(sock, views) : 0;
  auto rest = views.begin();
  while (rest != views.end() && sent >= rest->size()) sent -= (rest++)->size();
  if (rest != views.end()) {
    rest->remove_prefix(sent);
    w.writelines(std::span<const std::string_view>(rest, views.end()));
  }
  views.clear();
}

// A file that shrank after its frame's header went out cannot keep that
// header's promise: the connection ends (take_file() saw it long enough).
void H2Output::send_file(StreamWriter& w, const Piece& p) {
  const int sock = w.fileno();
  const std::size_t sent = sock >= 0 && w.is_flushed() ? sendfile_some(sock, p.fd, p.offset, p.size) : 0;
  if (sent == p.size) return;
  try {
    const std::string_view rest = pread(p.fd, p.offset + sent, p.size - sent);
    if (rest.size() == p.size - sent) {
      w.write(rest);
      return;
    }
  } catch (const std::exception&) {
    // As a file cut short: the bytes promised cannot be sent.
  }
  w.abort();
}

}  // namespace corio::http::detail
