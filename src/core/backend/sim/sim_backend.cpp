// A host's backend in a simulation (see sim_backend.hpp).
#include "core/backend/sim/sim_backend.hpp"

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace corio::detail::sim {

namespace {
[[noreturn]] void not_simulated(const char* what) {
  throw std::system_error(ENOTSUP, std::generic_category(),
                          std::string(what) + ": not simulated (only the simulation's sockets are)");
}
}  // namespace

SimSocket* SimBackend::sock(int fd) noexcept {
  SimSocket* s = net_.find(fd);
  return s != nullptr && s->host == host_ ? s : nullptr;
}

void SimBackend::set_interest(int, bool, bool) { not_simulated("add_reader/add_writer"); }

void SimBackend::attach(int fd, bool) {
  if (sock(fd) == nullptr) not_simulated("an fd that is not a simulated socket of this host");
  (void)table_.at(fd);
}

void SimBackend::detach(int fd) noexcept {
  if (Entry* e = table_.find(fd)) e->want_read = e->want_write = false;
}

void SimBackend::arm(int fd, bool write) {
  Entry& e = table_.at(fd);
  (write ? e.want_write : e.want_read) = true;
  if (!e.armed) {
    e.armed = true;
    armed_.push_back(fd);
  }
}

long SimBackend::try_recv(int fd, std::span<char> buf, bool) noexcept {
  SimSocket* s = sock(fd);
  return s != nullptr ? net_.recv(*s, buf.data(), buf.size()) : -EBADF;
}

long SimBackend::peek(int fd) noexcept {
  const SimSocket* s = sock(fd);
  if (s == nullptr) return -EBADF;
  if (s->unread() > 0) return static_cast<long>(s->unread());
  if (s->error != 0) return s->error;
  return s->eof ? 0 : -EAGAIN;
}

long SimBackend::try_send(int fd, std::string_view data) noexcept {
  SimSocket* s = sock(fd);
  return s != nullptr ? net_.send(*s, data.data(), data.size()) : -EBADF;
}

long SimBackend::try_accept(int fd, SocketAddress* peer) noexcept {
  SimSocket* s = sock(fd);
  return s != nullptr ? net_.accept(*s, peer) : -EBADF;
}

long SimBackend::start_connect(int fd, const SocketAddress& addr) noexcept {
  SimSocket* s = sock(fd);
  return s != nullptr ? net_.connect(*s, addr) : -EBADF;
}

long SimBackend::finish_connect(int fd) noexcept {
  const SimSocket* s = sock(fd);
  if (s == nullptr) return -EBADF;
  return s->connect_result == 1 ? -EINPROGRESS : s->connect_result;
}

long SimBackend::try_recvfrom(int fd, std::span<char> buf, SocketAddress* from) noexcept {
  SimSocket* s = sock(fd);
  return s != nullptr ? net_.recvfrom(*s, buf.data(), buf.size(), from) : -EBADF;
}

long SimBackend::try_sendto(int fd, std::string_view data, const SocketAddress& to) noexcept {
  SimSocket* s = sock(fd);
  return s != nullptr ? net_.sendto(*s, data.data(), data.size(), to) : -EBADF;
}
// A simulated pipe (a program's standard stream, Network::pipe) is a
// simulated socket: read(2) and write(2) are its recv and send.
long SimBackend::try_read(int fd, std::span<char> buf) noexcept {
  SimSocket* s = sock(fd);
  return s != nullptr ? net_.recv(*s, buf.data(), buf.size()) : -EOPNOTSUPP;
}

long SimBackend::try_write(int fd, std::string_view data) noexcept {
  SimSocket* s = sock(fd);
  return s != nullptr ? net_.send(*s, data.data(), data.size()) : -EOPNOTSUPP;
}

long SimBackend::shutdown(int fd, int how) noexcept {
  SimSocket* s = sock(fd);
  return s != nullptr ? net_.shutdown(*s, how) : -EBADF;
}

bool SimBackend::ready(int fd, const Entry& e) const noexcept {
  const SimSocket* s = net_.find(fd);
  if (s == nullptr) return e.want_read || e.want_write;  // closed under a waiter: it hears EBADF
  return (e.want_read && net_.readable(*s)) || (e.want_write && net_.writable(*s));
}

bool SimBackend::has_ready() noexcept {
  for (int fd : armed_) {
    if (const Entry* e = table_.find(fd); e != nullptr && ready(fd, *e)) {
      return true;
    }
  }
  return false;
}

// The ready fds, in an order drawn from the seed (epoll promises none).
int SimBackend::poll(int, IoEvent* out, int capacity) {
  std::shuffle(armed_.begin(), armed_.end(), net_.rng());
  int n = 0;
  std::size_t kept = 0;
  for (int fd : armed_) {
    Entry* e = table_.find(fd);
    if (e == nullptr || (!e->want_read && !e->want_write)) {
      if (e != nullptr) e->armed = false;
      continue;
    }
    if (n < capacity && ready(fd, *e)) {
      const SimSocket* s = net_.find(fd);
      const bool r = e->want_read && (s == nullptr || net_.readable(*s));
      const bool w = e->want_write && (s == nullptr || net_.writable(*s));
      out[n++] = IoEvent{fd, r, w};
      if (r) e->want_read = false;
      if (w) e->want_write = false;
    }
    if (e->want_read || e->want_write) {
      armed_[kept++] = fd;
    } else {
      e->armed = false;
    }
  }
  armed_.resize(kept);
  return n;
}

}  // namespace corio::detail::sim
