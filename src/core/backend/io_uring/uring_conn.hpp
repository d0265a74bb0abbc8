// One fd's state in the io_uring backend: what its receives queued, what its
// sends still owe, which requests it has in the ring. A Conn is allocated per
// attach() (or per add_reader/add_writer registration) and its address, with
// an operation tag in the low bits, is the user_data of every request it
// makes. It is freed only once no request of its is left in the ring, so a
// completion can always find it: after detach() (and the fd's number reused
// by a new Conn) a stale completion finds its old, detached Conn, and is
// dropped there (buffers returned, an accepted fd closed). That is the
// per-entry generation the seam needs, with the pointer as the generation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/backend/backend.hpp"
#include "core/backend/io_uring/fifo.hpp"

namespace corio::detail::uring {

enum class Kind : std::uint8_t {
  stream,    // SOCK_STREAM: multishot recv, queued sends
  listener,  // a SOCK_STREAM socket try_accept() was called on: multishot accept
  socket,    // datagram, seqpacket, or a pipe: syscalls + readiness
  watched,   // add_reader/add_writer: readiness only
};

// The operation in a user_data's low bits (a Conn is at least 8-aligned).
// kFile's pointer is a FileOp, not a Conn (uring_file.cpp): file requests
// are outside the Conn lifetime rules.
enum Op : std::uintptr_t {
  kIgnore = 0, kRecv = 1, kAccept = 2, kSend = 3, kPoll = 4, kWake = 5, kOwnRecv = 6, kFile = 7,
};
constexpr std::uintptr_t kOpMask = 7;

// A provided buffer the multishot recv filled, not yet read to its end, or
// (bid kOwnBuffer) the Conn's own buffer a one-shot recv filled.
struct Chunk {
  std::uint16_t bid;
  std::uint32_t len, off;
};
constexpr std::uint16_t kOwnBuffer = 0xffff;
constexpr std::size_t kOwnBufferSize = 16 * 1024;

struct Conn {
  Conn(int fd_, Kind kind_) : fd(fd_), kind(kind_) {}

  int fd;
  Kind kind;
  bool detached = false;  // the loop let go of the fd; it lives on for its requests
  bool owns_fd = false;   // fd is a dup made at detach() for the sends still owed

  // Whether the stream's reads and writes go through try_recv/try_send. Code
  // that waits for readiness and makes its own syscalls (a pipe transport
  // handed a socket, a TLS library) gets readiness (POLL_ADD) instead, or a
  // multishot recv would take its bytes.
  bool recv_used = false, send_used = false;

  // ---- receiving (stream) ----
  Fifo<Chunk> chunks;
  bool recv_on = false;      // a reader armed once: keep a receive going while below the cap
  bool recv_armed = false;   // the multishot recv is in the ring
  bool recv_cancel = false;  // past the cap: cancel it at the next submit
  bool starved = false;      // the ring ran dry: re-armed once buffers come back
  // While starved, a parked reader still progresses: one-shot recvs into a
  // buffer of its own, one at a time, so that readers that do not read
  // cannot stall the ones that do by holding every buffer of the ring.
  std::unique_ptr<char[]> own;
  bool own_armed = false, own_queued = false;
  bool eof = false;          // sticky
  int recv_error = 0;        // sticky, -errno

  // ---- accepting (listener) ----
  Fifo<int> accepted;
  bool accept_on = false, accept_armed = false, accept_cancel = false;
  int accept_error = 0;  // -errno, handed to one try_accept

  // ---- sending (stream): `inflight` is in the ring from `out_off` on,
  // `pending` waits for it; one send in flight keeps the order ----
  std::string inflight, pending;
  std::size_t out_off = 0;
  bool send_inflight = false;
  int send_error = 0;     // sticky, -errno
  bool drained = false;   // the queue emptied since a writer was last told
  int shutdown_how = -1;  // a shutdown() waiting for the sends before it

  // ---- readiness (POLL_ADD) ----
  unsigned interest = 0;     // add_reader/add_writer: POLLIN | POLLOUT
  unsigned poll_mask = 0;    // of the poll in the ring (0: none)
  bool poll_removing = false;
  bool poll_dead = false;    // the fd went bad (EBADF): no more polls
  unsigned revents = 0;      // what completed polls saw, not yet reported
  bool connecting = false;   // start_connect() said EINPROGRESS

  // ---- what the loop waits for (arm()) and the backend's work lists ----
  bool want_read = false, want_write = false;
  bool in_prep = false, in_ready = false;

  std::size_t queued_out() const noexcept { return inflight.size() - out_off + pending.size(); }
  bool sends_owed() const noexcept { return send_inflight || queued_out() > 0; }
  bool in_ring() const noexcept {
    return recv_armed || own_armed || accept_armed || send_inflight || poll_mask != 0;
  }
};

inline std::uint64_t tag(const Conn* c, Op op) noexcept {
  return reinterpret_cast<std::uintptr_t>(c) | op;
}

// An fd's entry in the loop's table: the loop's half and ours.
struct Entry : FdSlot {
  Conn* conn = nullptr;
};

}  // namespace corio::detail::uring
