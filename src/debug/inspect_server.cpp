// The inspection socket (inspect.hpp, inspect_server.hpp): where it lives,
// who may connect, and the bounded one-request exchange on each connection.
#include "inspect_server.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include <corio/event_loop.hpp>
#include <corio/inspect.hpp>

namespace corio {

std::string inspect_directory() {
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run && *run)
    return std::string(run) + "/corio";
  const char* tmp = std::getenv("TMPDIR");
  return fmt::format("{}/corio-{}", tmp && *tmp ? tmp : "/tmp", ::geteuid());
}

std::string inspect_socket_path(int pid) { return fmt::format("{}/{}.sock", inspect_directory(), pid); }

namespace detail {
namespace {

constexpr std::size_t kMaxRequest = 256;
constexpr std::size_t kMaxConnections = 16;
constexpr std::size_t kMaxAnswer = std::size_t{16} << 20;
constexpr std::chrono::seconds kExchangeTimeout{5};
// How long accepting pauses when the process is out of fds.
constexpr std::chrono::milliseconds kAcceptPause{100};

// One loop per process serves (the path is per pid). The path is kept for
// atexit: a program calling exit() skips the loop's close().
std::atomic<bool> g_serving{false};
char g_socket_path[sizeof(sockaddr_un::sun_path)];

void unlink_at_exit() noexcept {
  if (g_socket_path[0] != '\0') ::unlink(g_socket_path);
}

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// The directory must be ours and closed to others: in /tmp anyone could have
// made corio-<uid> first, to see (or serve) what we would put there.
void ensure_private_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) == 0) return;
  if (errno != EEXIST) throw_errno("cannot create " + dir);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) throw_errno("cannot stat " + dir);
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
    throw std::system_error(EPERM, std::generic_category(),
                            dir + " is not a directory of uid " + std::to_string(::geteuid()));
  }
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0) throw_errno("cannot chmod " + dir);
}

bool inspect_from_environment() {
  const char* v = std::getenv("CORIO_INSPECT");
  return v && *v && std::strcmp(v, "0") != 0;
}

// For the refusals, sent once without waiting: a peer that does not read
// them loses them, nothing else.
void send_and_close(int fd, std::string_view text) noexcept {
  [[maybe_unused]] ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(fd);
}

}  // namespace

struct InspectServer::Connection {
  int fd;
  std::string in, out;
  std::size_t sent = 0;
  bool writing = false;
  TimerHandle deadline;
};

InspectServer::InspectServer(EventLoop& loop, std::string path) : loop_(loop), path_(std::move(path)) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof addr.sun_path) {
    throw std::system_error(ENAMETOOLONG, std::generic_category(), path_);
  }
  ensure_private_dir(path_.substr(0, path_.rfind('/')));
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw_errno("socket");
  // A file already there is a dead process's with our pid: ours to replace.
  ::unlink(path_.c_str());
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::chmod(path_.c_str(), 0600) != 0 || ::listen(fd_, static_cast<int>(kMaxConnections)) != 0) {
    const int err = errno;
    ::close(fd_);
    ::unlink(path_.c_str());
    throw std::system_error(err, std::generic_category(), "cannot listen at " + path_);
  }
  std::memcpy(g_socket_path, path_.c_str(), path_.size() + 1);
  static const bool registered = std::atexit(unlink_at_exit) == 0;
  (void)registered;
  watch(fd_, false, [this] { on_accept(); });
}

InspectServer::~InspectServer() {
  resume_accepting_.cancel();
  while (!connections_.empty()) drop(connections_.back().get());
  try {
    unwatch(fd_, false);
  } catch (...) {  // as in drop(): closing the fd makes the kernel forget it
  }
  ::close(fd_);
  ::unlink(path_.c_str());
  g_socket_path[0] = '\0';
  g_serving.store(false);
}

// Every fd of the server is watched here and unwatched below, and only
// there: they are internal watchers, which the loop's deadlock check does not
// count as something that could wake a task.
void InspectServer::watch(int fd, bool write, std::function<void()> fn) {
  if (write) {
    loop_.add_writer(fd, std::move(fn));
  } else {
    loop_.add_reader(fd, std::move(fn));
  }
  loop_.io().add_internal_watcher();
}

void InspectServer::unwatch(int fd, bool write) {
  if (write ? loop_.remove_writer(fd) : loop_.remove_reader(fd))
    loop_.io().remove_internal_watcher();
}

void InspectServer::on_accept() {
  // A few per wake-up: a flood of connections must not hold the loop.
  for (std::size_t i = 0; i < kMaxConnections; ++i) {
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      admit(fd);
    } else if (errno == ECONNABORTED || errno == EINTR) {
      continue;  // that one connection's trouble
    } else {
      if (errno != EAGAIN) pause_accepting();
      return;
    }
  }
}

// Out of fds (or memory) the pending connection stays in the backlog and the
// socket readable: watched, it would wake the loop again at once, every turn.
// So it is not watched for a moment, as the network server pauses its accept
// loop; the connection waits in the backlog and is served after.
void InspectServer::pause_accepting() {
  unwatch(fd_, false);
  resume_accepting_ = loop_.call_later(kAcceptPause, [this] {
    resume_accepting_ = {};
    watch(fd_, false, [this] { on_accept(); });
  });
}

void InspectServer::admit(int fd) {
  ucred peer{};
  socklen_t len = sizeof peer;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) return send_and_close(fd, "");
  if (peer.uid != ::geteuid() && peer.uid != 0) {
    return send_and_close(fd, fmt::format("error: permission denied: uid {} may not inspect a "
                                          "process of uid {}\n",
                                          peer.uid, ::geteuid()));
  }
  if (connections_.size() >= kMaxConnections) {
    return send_and_close(fd, "error: too many inspection clients at once, try again\n");
  }
  auto c = std::make_unique<Connection>();
  Connection* raw = c.get();
  c->fd = fd;
  connections_.push_back(std::move(c));
  // On virtual time the deadline would pass at once whenever the loop idles.
  if (!loop_.clock().is_virtual()) {
    raw->deadline = loop_.call_later(kExchangeTimeout, [this, raw] { drop(raw); });
  }
  try {
    watch(fd, false, [this, raw] { on_readable(raw); });
  } catch (...) {
    drop(raw);
    throw;  // the loop reports it as the accept callback's error
  }
}

void InspectServer::on_readable(Connection* c) {
  char buf[kMaxRequest + 1];
  const ssize_t n = ::recv(c->fd, buf, sizeof buf, 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) return drop(c);  // gone before a whole request
  c->in.append(buf, static_cast<std::size_t>(n));
  const std::size_t end = c->in.find('\n');
  if (std::min(end, c->in.size()) > kMaxRequest) {
    return reply(c, fmt::format("error: a request is one line of at most {} bytes\n", kMaxRequest));
  }
  if (end == std::string::npos) return;
  std::string_view line(c->in.data(), end);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string answer;
  try {
    answer = inspect_answer(loop_, line);
  } catch (const std::exception& e) {
    answer = fmt::format("error: {}\n", e.what());
  }
  reply(c, std::move(answer));
}

void InspectServer::reply(Connection* c, std::string text) {
  unwatch(c->fd, false);
  if (text.size() > kMaxAnswer) {
    text.resize(text.rfind('\n', kMaxAnswer) + 1);
    text += fmt::format("error: the answer was cut at {} MiB\n", kMaxAnswer >> 20);
  }
  c->out = std::move(text);
  flush(c);
}

void InspectServer::flush(Connection* c) {
  while (c->sent < c->out.size()) {
    const ssize_t n = ::send(c->fd, c->out.data() + c->sent, c->out.size() - c->sent,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      c->sent += static_cast<std::size_t>(n);
    } else if (errno != EINTR) {
      if (errno != EAGAIN) return drop(c);
      if (!c->writing) {
        c->writing = true;
        watch(c->fd, true, [this, c] { flush(c); });
      }
      return;
    }
  }
  drop(c);  // answered: closing is the end of the answer
}

void InspectServer::drop(Connection* c) noexcept {
  try {
    unwatch(c->fd, c->writing);
    c->deadline.cancel();
  } catch (...) {  // the poller refused to forget the fd: closing it makes the kernel forget it
  }
  ::close(c->fd);
  for (auto it = connections_.begin(); it != connections_.end(); ++it) {
    if (it->get() == c) {
      connections_.erase(it);
      return;
    }
  }
}

std::unique_ptr<InspectServer> start_inspect_server(EventLoop& loop, bool requested) noexcept {
  if (!requested && !inspect_from_environment()) return nullptr;
  bool idle = false;
  if (!g_serving.compare_exchange_strong(idle, true)) return nullptr;
  try {
    return std::make_unique<InspectServer>(loop, inspect_socket_path(::getpid()));
  } catch (const std::exception& e) {
    g_serving.store(false);
    std::fprintf(stderr, "corio: no inspection socket: %s\n", e.what());
    return nullptr;
  }
}

}  // namespace detail
}  // namespace corio
