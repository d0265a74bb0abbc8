// epoll backend: level-triggered readiness for add_reader/add_writer, as
// asyncio's selector loop; edge-triggered for socket operations, registered
// once per socket (Boost.Asio and Tokio do the same: no epoll_ctl per wait).
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

namespace corio::detail {
namespace {

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

class EpollPoller final : public Poller {
 public:
  EpollPoller() {
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
  ~EpollPoller() override {
    close(wakefd_);
    close(epfd_);
  }

  const char* name() const noexcept override { return "epoll"; }

  void set_interest(int fd, bool read, bool write) override {
    FdState& st = state(fd, "add_reader/add_writer");
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
      out[count++] = IoEvent{e.data.fd, in, (e.events & EPOLLOUT) != 0 || err, rdhup || err};
    }
    return count;
  }

  void watch_edges(int fd) override {
    FdState& st = state(fd, "socket operation");
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.fd = fd;
    // EEXIST: this very fd was watched and not forgotten (a Socket closed
    // with no loop running); the kernel drops closed fds, so it is a new one.
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) < 0 &&
        (errno != EEXIST || epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev) < 0)) {
      throw_errno("epoll_ctl(socket)");
    }
    st = FdState{};
    st.registered = st.wanted = ev.events;
  }

  void forget(int fd) noexcept override {
    if (fd < 0 || static_cast<std::size_t>(fd) >= fds_.size()) return;
    FdState& st = fds_[static_cast<std::size_t>(fd)];
    if (!(st.registered & EPOLLET)) return;
    epoll_event ev{};
    (void)epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, &ev);
    st = FdState{};
  }

  void wakeup() noexcept override { (void)eventfd_write(wakefd_, 1); }

 private:
  struct FdState {
    unsigned wanted = 0;
    unsigned registered = 0;
    bool dirty = false;
  };

  FdState& state(int fd, const char* what) {
    if (fd < 0) throw std::system_error(EBADF, std::generic_category(), what);
    if (static_cast<std::size_t>(fd) >= fds_.size()) fds_.resize(static_cast<std::size_t>(fd) + 1);
    return fds_[static_cast<std::size_t>(fd)];
  }

  void apply_changes() {
    for (int fd : changed_) {
      FdState& st = fds_[static_cast<std::size_t>(fd)];
      st.dirty = false;
      if (st.wanted != st.registered) ctl(fd, st);
    }
    changed_.clear();
  }

  // Moves the kernel's interest set for fd to st.wanted. An fd closed and
  // reused behind our back is no longer registered: fall back to ADD.
  void ctl(int fd, FdState& st) {
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
  std::vector<FdState> fds_;
  std::vector<int> changed_;
  std::vector<epoll_event> events_;
};

}  // namespace

std::unique_ptr<Poller> make_epoll_poller() { return std::make_unique<EpollPoller>(); }

}  // namespace corio::detail
