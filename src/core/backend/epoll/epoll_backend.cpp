// epoll backend: level-triggered readiness for add_reader/add_writer, as
// asyncio's selector loop; edge-triggered for socket operations, registered
// once per socket (Boost.Asio and Tokio do the same: no epoll_ctl per wait).
// Each operation is its non-blocking syscall, made only when an edge may
// have brought something since the socket was last seen drained.
//
// Changes of an fd's interest set (reader and writer toggling) are batched per
// fd (libuv's watcher queue) and applied with MOD just before epoll_wait;
// registration and removal are immediate. An eventfd registered at creation makes
// wakeup() interrupt a blocked wait from any thread.
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <vector>

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "../backend.hpp"
#include "../syscalls.hpp"

namespace corio::detail {
namespace {

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// One per fd: the loop's waiters, the registration, and the edge state.
struct EpollFd : FdSlot {
  unsigned wanted = 0;
  unsigned registered = 0;
  bool dirty = false;
  // An edge came since the socket was last seen drained: a read may find
  // data. Remembered even with no waiter parked, or the edge would be lost.
  bool maybe_readable = true;
  // Sticky (Tokio's READ_CLOSED): a FIN that arrived with the last data
  // sends no further edge, so a short read must not make us wait for one.
  bool read_closed = false;

  void drained() noexcept { maybe_readable = read_closed; }
};

class EpollBackend final : public IoBackend {
 public:
  EpollBackend() {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epfd_ < 0) throw_errno("epoll_create1");
    wakefd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wakefd_ < 0) {
      close(epfd_);
      throw_errno("eventfd");
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wakefd_;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, wakefd_, &ev) < 0) throw_errno("epoll_ctl(eventfd)");
  }
  ~EpollBackend() override {
    close(wakefd_);
    close(epfd_);
  }

  const char* name() const noexcept override { return "epoll"; }

  FdSlot* find(int fd) noexcept override { return fds_.find(fd); }
  FdSlot& slot(int fd) override { return entry(fd, "socket operation"); }
  void drop_slots() noexcept override { fds_.clear(); }

  void set_interest(int fd, bool read, bool write) override {
    EpollFd& st = entry(fd, "add_reader/add_writer");
    if (st.registered & EPOLLET) {
      throw std::system_error(EBUSY, std::generic_category(), "fd is in use by socket operations");
    }
    st.wanted = (read ? EPOLLIN : 0u) | (write ? EPOLLOUT : 0u);
    if ((st.registered == 0) != (st.wanted == 0)) {
      // Registration and removal are immediate. A new fd fails in
      // add_reader() itself if epoll refuses it (a regular file: EPERM), as in
      // asyncio; and a removed fd leaves the set before it can be closed and
      // its number reused, which a batched DEL would otherwise confuse with
      // the new fd's registration. Only changes of an interest set wait.
      ctl(fd, st);
      return;
    }
    if (!st.dirty && st.wanted != st.registered) {
      st.dirty = true;
      changed_.push_back(fd);
    }
  }

  int poll(int timeout_ms, IoEvent* out, int capacity) override {
    apply_changes();
    events_.resize(static_cast<std::size_t>(capacity));
    int n = epoll_wait(epfd_, events_.data(), capacity, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) return 0;
      throw_errno("epoll_wait");
    }
    int count = 0;
    for (int i = 0; i < n; ++i) {
      const epoll_event& e = events_[static_cast<std::size_t>(i)];
      if (e.data.fd == wakefd_) {
        eventfd_t value;
        (void)eventfd_read(wakefd_, &value);
        continue;
      }
      const bool err = (e.events & (EPOLLERR | EPOLLHUP)) != 0;
      const bool rdhup = (e.events & EPOLLRDHUP) != 0;  // read() sees EOF
      const bool in = (e.events & EPOLLIN) != 0 || rdhup || err;
      if (EpollFd* st = fds_.find(e.data.fd)) {
        if (in) st->maybe_readable = true;
        if (rdhup || err) st->read_closed = true;
      }
      out[count++] = IoEvent{e.data.fd, in, (e.events & EPOLLOUT) != 0 || err};
    }
    return count;
  }

  void attach(int fd, bool) override {
    EpollFd& st = entry(fd, "socket operation");
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.fd = fd;
    // EEXIST: this very fd was watched and not forgotten (a Socket closed
    // with no loop running); the kernel drops closed fds, so it is a new one.
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) < 0 &&
        (errno != EEXIST || epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev) < 0)) {
      throw_errno("epoll_ctl(socket)");
    }
    st.registered = st.wanted = ev.events;
    st.dirty = false;
    st.maybe_readable = true;  // a new socket: nothing known yet
    st.read_closed = false;
  }

  void detach(int fd) noexcept override {
    EpollFd* st = fds_.find(fd);
    if (!st || !(st->registered & EPOLLET)) return;
    epoll_event ev{};
    (void)epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, &ev);
    st->registered = st->wanted = 0;
  }

  void arm(int, bool) override {}  // the edge-triggered registration reports both ways

  // A stream socket that returns less than asked has emptied its receive
  // queue: the next read waits for an edge first. (Not at EOF, which no later
  // edge would announce; not for datagrams, which arrive one per read.)
  long try_recv(int fd, std::span<char> buf, bool stream) noexcept override {
    return read_after_edge(fds_.find(fd), buf.size(), stream, [&] { return sys::recv(fd, buf); });
  }
  // A pipe drains as a stream socket does. Only an attached fd has edges to
  // go by (try_read may come before the first wait attaches it).
  long try_read(int fd, std::span<char> buf) noexcept override {
    EpollFd* st = fds_.find(fd);
    if (st && !(st->registered & EPOLLET)) st = nullptr;
    return read_after_edge(st, buf.size(), true, [&] { return sys::read(fd, buf); });
  }
  long peek(int fd) noexcept override { return sys::peek(fd); }
  long try_send(int fd, std::string_view data) noexcept override { return sys::send(fd, data); }
  long try_sendv(int fd, std::span<const std::string_view> pieces) noexcept override {
    return sys::sendv(fd, pieces);
  }
  long try_write(int fd, std::string_view data) noexcept override { return sys::write(fd, data); }
  long try_accept(int fd, SocketAddress* peer) noexcept override { return sys::accept(fd, peer); }
  long start_connect(int fd, const SocketAddress& addr) noexcept override {
    return sys::connect(fd, addr);
  }
  long finish_connect(int fd) noexcept override { return sys::connect_result(fd); }
  long try_recvfrom(int fd, std::span<char> buf, SocketAddress* from) noexcept override {
    return sys::recvfrom(fd, buf, from);
  }
  long try_sendto(int fd, std::string_view data, const SocketAddress& to) noexcept override {
    return sys::sendto(fd, data, to);
  }
  long shutdown(int fd, int how) noexcept override { return sys::shutdown(fd, how); }
  std::size_t unsent(int) noexcept override { return 0; }  // every send is a syscall

  void wakeup() noexcept override { (void)eventfd_write(wakefd_, 1); }

 private:
  // The read syscall `read` of up to `size` bytes, made only when an edge may
  // have brought something since st (null: no edges known) was drained.
  template <class Read>
  static long read_after_edge(EpollFd* st, std::size_t size, bool stream, Read read) noexcept {
    if (st && !st->maybe_readable) return -EAGAIN;
    const long n = read();
    if (st && (n == -EAGAIN || (stream && n > 0 && static_cast<std::size_t>(n) < size))) {
      st->drained();
    }
    return n;
  }

  EpollFd& entry(int fd, const char* what) {
    if (fd < 0) throw std::system_error(EBADF, std::generic_category(), what);
    return fds_.at(fd);
  }

  void apply_changes() {
    for (int fd : changed_) {
      EpollFd& st = fds_.at(fd);
      st.dirty = false;
      if (st.wanted != st.registered) ctl(fd, st);
    }
    changed_.clear();
  }

  // Moves the kernel's interest set for fd to st.wanted. An fd closed and
  // reused behind our back is no longer registered: fall back to ADD.
  void ctl(int fd, EpollFd& st) {
    epoll_event ev{};
    ev.events = st.wanted;
    ev.data.fd = fd;
    int rc;
    if (st.wanted == 0) {
      (void)epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, &ev);  // a closed fd has left by itself
      rc = 0;
    } else if (st.registered == 0) {
      rc = epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
      if (rc < 0 && errno == EEXIST) rc = epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev);
    } else {
      rc = epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev);
      if (rc < 0 && errno == ENOENT) rc = epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
    }
    if (rc < 0) {
      st.registered = st.wanted = 0;
      throw_errno("epoll_ctl");
    }
    st.registered = st.wanted;
  }

  int epfd_ = -1;
  int wakefd_ = -1;
  FdTable<EpollFd> fds_;
  std::vector<int> changed_;
  std::vector<epoll_event> events_;
};

}  // namespace

std::unique_ptr<IoBackend> make_epoll_backend() { return std::make_unique<EpollBackend>(); }

}  // namespace corio::detail
