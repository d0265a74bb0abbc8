// A host's backend in a simulation: the seam's operations (backend.hpp) on
// the simulated sockets of one host (sim_network.hpp). poll() never blocks:
// the simulation moves time and steps the hosts (sim_world.cpp), and a host
// runs only when it can.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/backend/backend.hpp"
#include "core/backend/sim/sim_network.hpp"

namespace corio::detail::sim {

// Posts from real threads to the simulation's loops (a job on a user's own
// pool has ended). While a host waits for one and nothing else can happen,
// the simulation sleeps until the next post, not a moment longer.
class ThreadPosts {
 public:
  std::uint32_t seen() const noexcept { return count_.load(std::memory_order_acquire); }
  void post() noexcept {
    count_.fetch_add(1, std::memory_order_release);
    count_.notify_all();
  }
  // Returns once a post came after `seen` was read (at once if one has).
  void wait_after(std::uint32_t seen) const noexcept { count_.wait(seen, std::memory_order_acquire); }

 private:
  std::atomic<std::uint32_t> count_{0};
};

class SimBackend final : public IoBackend {
 public:
  SimBackend(Network& net, int host, ThreadPosts& posts) : net_(net), host_(host), posts_(posts) {}

  const char* name() const noexcept override { return "sim"; }
  FdSlot* find(int fd) noexcept override { return table_.find(fd); }
  FdSlot& slot(int fd) override { return table_.at(fd); }
  void drop_slots() noexcept override { table_.clear(); }

  void set_interest(int fd, bool read, bool write) override;
  void attach(int fd, bool stream) override;
  void detach(int fd) noexcept override;
  void arm(int fd, bool write) override;

  long try_recv(int fd, std::span<char> buf, bool stream) noexcept override;
  long peek(int fd) noexcept override;
  long try_send(int fd, std::string_view data) noexcept override;
  long try_accept(int fd, SocketAddress* peer) noexcept override;
  long start_connect(int fd, const SocketAddress& addr) noexcept override;
  long finish_connect(int fd) noexcept override;
  long try_recvfrom(int fd, std::span<char> buf, SocketAddress* from) noexcept override;
  long try_sendto(int fd, std::string_view data, const SocketAddress& to) noexcept override;
  long shutdown(int fd, int how) noexcept override;
  std::size_t unsent(int) noexcept override { return 0; }  // sends go to the wire at once
  long try_read(int fd, std::span<char> buf) noexcept override;
  long try_write(int fd, std::string_view data) noexcept override;

  int poll(int timeout_ms, IoEvent* out, int capacity) override;
  // The simulation never sleeps in poll(); a wake-up is a real thread's
  // post, which the simulation may be waiting for (ThreadPosts).
  void wakeup() noexcept override { posts_.post(); }

  // Whether poll() would report anything now.
  bool has_ready() noexcept;

 private:
  struct Entry : FdSlot {
    bool want_read = false, want_write = false, armed = false;
  };
  SimSocket* sock(int fd) noexcept;
  bool ready(int fd, const Entry& e) const noexcept;

  Network& net_;
  int host_;
  ThreadPosts& posts_;
  FdTable<Entry> table_;
  std::vector<int> armed_;  // fds with a direction wanted, in the order they were armed
};

}  // namespace corio::detail::sim
