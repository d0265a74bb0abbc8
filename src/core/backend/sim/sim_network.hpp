// A simulated network for corio::testing::Simulation: TCP-like streams
// between hosts that live in one process, on one virtual clock, with every
// open choice (the order of simultaneous deliveries, of ready fds, latency
// jitter) drawn from one seeded generator, so that a seed replays a run.
//
// Shape: each socket is a SimSocket under a placeholder fd (a real fd of
// /dev/null, so that its number is unique in the process and a stray real
// syscall on it fails instead of touching another file). The network is the
// SocketSystem of the simulation's thread (socket, bind, listen, close...)
// and each host's loop runs on a SimBackend (sim_backend.cpp) that reads and
// writes the sockets of its host. Bytes travel through Channels, one per
// direction of a connection: a send appends a segment that the channel
// delivers at now + latency, in order; a FIN or a reset is a segment too, so
// it arrives after the bytes sent before it, as on TCP.
//
// A Unix socket is the same stream, bound to a path of its host's own
// instead of a port; a pipe (a program's standard stream, sim_process.hpp)
// is a connection made at once, written at one end only.
//
// Faults: a partition holds a pair of hosts' segments (and connection
// attempts) until it heals, as TCP's retransmissions would carry them across
// a healed link; a reset kills every connection between two hosts.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <corio/detail/entropy.hpp>
#include <corio/detail/socket_system.hpp>
#include <corio/socket.hpp>

namespace corio::detail::sim {

class Network;
struct SimSocket;

// One direction of a connection (or a connection attempt): what is on the wire.
struct Channel {
  struct Segment {
    enum Kind : std::uint8_t { data, fin, reset, syn, syn_ack, refused } kind;
    std::string bytes;
    double at;  // when it arrives
  };
  std::uint64_t id = 0;
  SimSocket* from = nullptr;  // null once the sending socket is gone
  SimSocket* to = nullptr;    // null once the receiving socket is gone (or, for a SYN, not known yet)
  Channel* back = nullptr;    // the other direction, once connected
  int from_host = 0, to_host = 0;
  std::deque<Segment> wire;
  double last_at = 0;  // deliveries never overtake each other
  std::size_t held = 0;  // deliveries a partition stopped, for its heal
};

struct SimSocket {
  enum class State : std::uint8_t { fresh, bound, listening, connecting, connected, closed };
  int fd = -1;
  std::uint64_t id = 0;  // creation order: what the trace names (fds differ between processes)
  int host = 0;
  State state = State::fresh;
  SocketAddress local, peer;
  Channel* out = nullptr;  // to the peer (owned by the network)
  SimSocket* peer_socket = nullptr;  // null once it closed
  std::string inbox;     // received, not read yet (from inbox_off on)
  std::size_t inbox_off = 0;
  std::size_t in_flight = 0;  // sent bytes not delivered yet: the send window's use
  bool eof = false, shut_wr = false, reset_on_close = false;
  int error = 0;     // sticky -errno (ECONNRESET, ECONNREFUSED)
  int connect_result = 1;  // 1: none yet; 0 or -errno once the handshake ends
  std::deque<SimSocket*> accept_queue;
  int backlog = 0;
  // A datagram socket: what arrived and from whom; `peer` set by a connect().
  bool datagram = false, has_peer = false;
  bool unix_family = false;  // AF_UNIX: bound to a path of its host, not a port
  bool sink = false;  // what arrives is dropped (a program's stdout nobody pipes)
  std::deque<std::pair<std::string, SocketAddress>> datagrams;
  std::size_t datagram_bytes = 0;  // in `datagrams`: past the window, arrivals are dropped

  std::size_t unread() const noexcept { return inbox.size() - inbox_off; }
};

struct NetworkOptions {
  std::uint64_t seed = 1;
  double latency = 0.001;  // one way, seconds
  double jitter = 0.0;     // up to this much more per segment, drawn from the seed
  std::size_t window = 256 * 1024;  // bytes in flight + unread at the peer, per connection
  bool short_io = false;  // a send takes, a read returns, a random part of what it could
  double loss = 0;        // the chance that a datagram is lost, drawn from the seed
};

// The network, and the thread's SocketSystem and Entropy while it lives:
// the wall clock reads the virtual clock from 2026-01-01 00:00 UTC on, and
// corio's random choices draw from the seed.
class Network final : public SocketSystem, public Entropy {
 public:
  explicit Network(NetworkOptions options);
  ~Network() override;

  // ---- hosts ----
  int add_host(std::string name, std::string address);  // its index
  const std::string& address(int host) const { return hosts_.at(static_cast<std::size_t>(host)); }
  // The host whose sockets the calls below make (the one being stepped).
  void set_current_host(int host) noexcept { current_ = host; }
  int current_host() const noexcept { return current_; }

  // ---- SocketSystem ----
  int open(int family, int type, int protocol) noexcept override;
  int bind(int fd, const SocketAddress& addr) noexcept override;
  int listen(int fd, int backlog) noexcept override;
  int connect_datagram(int fd, const SocketAddress& addr) noexcept override;
  int set_option(int fd, int level, int name, const void* value, socklen_t len) noexcept override;
  int address(int fd, bool peer, SocketAddress* out) noexcept override;
  int close(int fd) noexcept override;
  std::optional<std::string> resolve(const std::string& name) override;

  // ---- what a host's backend does (sim_backend.cpp) ----
  SimSocket* find(int fd) noexcept;
  long recv(SimSocket& s, char* buf, std::size_t len) noexcept;
  long send(SimSocket& s, const char* data, std::size_t len) noexcept;
  long accept(SimSocket& s, SocketAddress* peer) noexcept;
  long connect(SimSocket& s, const SocketAddress& to) noexcept;
  long shutdown(SimSocket& s, int how) noexcept;
  bool readable(const SimSocket& s) const noexcept;
  // A pipe from writer_host to reader_host: two connected sockets, {the
  // write end, the read end}; the read end sends nothing (shut for writing).
  // Throws std::system_error when out of fds.
  std::pair<int, int> pipe(int writer_host, int reader_host);
  bool writable(const SimSocket& s) const noexcept;
  // Datagrams (sim_datagram.cpp): sent whole, each on its own time (so
  // jitter reorders them), lost at the `loss` rate and across a partition.
  long sendto(SimSocket& s, const char* data, std::size_t len, const SocketAddress& to) noexcept;
  long recvfrom(SimSocket& s, char* buf, std::size_t len, SocketAddress* from) noexcept;

  // ---- time ----
  double now() const noexcept { return now_; }
  // The earliest delivery on the wire (infinity: none).
  double next_delivery() const noexcept;
  // Moves the clock to t and delivers everything due by then.
  void advance_to(double t);
  std::mt19937_64& rng() noexcept { return rng_; }
  std::uint64_t random() override { return rng_(); }
  double wall() override { return kEpoch + now_; }
  static constexpr double kEpoch = 1767225600;  // 2026-01-01T00:00:00Z

  // ---- faults ----
  void partition(int a, int b);
  void heal(int a, int b);
  void reset(int a, int b);
  // Adds `seconds` to the one-way latency between a and b (0: back to normal).
  void slow(int a, int b, double seconds);

  // A digest of every delivery so far (time, channel, kind, bytes): the same
  // seed and program give the same digest.
  std::uint64_t digest() const noexcept { return digest_; }
  std::size_t open_sockets() const noexcept { return sockets_.size(); }

 private:
  int host_of(const SocketAddress& a) const noexcept;  // -1: no such host
  SimSocket* listener(int host, const SocketAddress& at) noexcept;
  int bind_path(SimSocket& s, const SocketAddress& addr) noexcept;
  SocketAddress host_address(int host, std::uint16_t port) const;
  std::uint16_t ephemeral_port(int host);
  Channel* new_channel(SimSocket* from, SimSocket* to, int from_host, int to_host);
  void put(Channel& ch, Channel::Segment::Kind kind, std::string bytes = {});
  void deliver(Channel& ch);
  void arrive(Channel& ch, Channel::Segment& seg);
  void establish(SimSocket& client, SimSocket& listener);
  void drop_socket(SimSocket& s) noexcept;
  bool cut(int a, int b) const noexcept;
  void note(const Channel& ch, const Channel::Segment& seg) noexcept;
  void mix(const void* p, std::size_t n) noexcept;
  double arrival(int from_host, int to_host) noexcept;
  struct Datagram {
    int to_host;
    SocketAddress from, to;
    std::string bytes;
  };
  void land(Datagram& d);
  // The earlier of the next segment and the next datagram, delivered.
  void deliver_next();
  std::size_t some_of(std::size_t n) noexcept;

  NetworkOptions options_;
  std::mt19937_64 rng_;
  std::vector<std::string> hosts_;  // addresses, by index
  std::vector<std::string> names_;
  int current_ = 0;
  double now_ = 0;
  std::uint64_t next_id_ = 1;
  std::map<int, std::unique_ptr<SimSocket>> sockets_;  // by fd
  std::vector<std::unique_ptr<Channel>> channels_;
  // Pending deliveries: (when, random tie-break, channel); each delivers its
  // channel's front segment, so that ties never reorder one channel's bytes.
  std::set<std::tuple<double, std::uint64_t, Channel*>> due_;
  // Datagrams on their way, by (when, random tie-break).
  std::map<std::pair<double, std::uint64_t>, Datagram> datagrams_due_;
  std::set<std::pair<int, int>> cuts_;
  std::map<std::pair<int, int>, double> slow_;  // extra latency per pair of hosts
  std::vector<Channel*> held_;  // segments a partition stopped
  std::map<int, std::uint16_t> next_port_;
  std::uint64_t digest_ = 14695981039346656037ull;
  SocketSystem* replaced_ = nullptr;
  Entropy* replaced_entropy_ = nullptr;
};

}  // namespace corio::detail::sim
