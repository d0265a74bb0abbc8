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
// 8 bytes: a buffer holds at most 64 KiB, so 24 bits count its bytes.
struct Chunk {
  Chunk() noexcept = default;
  Chunk(std::uint16_t buffer, std::uint32_t length) noexcept : bid(buffer), len(length) {}
  std::uint64_t bid : 16 = 0, len : 24 = 0, off : 24 = 0;
};
constexpr std::uint16_t kOwnBuffer = 0xffff;
constexpr std::size_t kOwnBufferSize = 16 * 1024;

// What a stream's sends still owe: `inflight` is in the ring from `off` on,
// `pending` waits for it (one send in flight keeps the order). A Conn holds
// one only while it owes bytes: it comes from the backend's spares and goes
// back to them when the queue drains (kSendSpares in uring_impl.hpp).
struct SendQueue {
  std::string inflight, pending;
  std::size_t off = 0;
  std::size_t size() const noexcept { return inflight.size() - off + pending.size(); }
};

// A listener's accepted fds, not yet claimed by try_accept().
struct AcceptQueue {
  Fifo<int> accepted;
  int error = 0;  // -errno, handed to one try_accept
};

// What few Conns need, behind one pointer: a listener's accept queue, or a
// starved stream's own receive buffer.
struct Rare {
  AcceptQueue accepts;
  std::unique_ptr<char[]> own;
};

// The fields are packed (flags in bits, errors in 16 bits, rare state
// behind pointers): every connected socket has a Conn for its whole life,
// idle or not (56 bytes, a 64-byte heap chunk on x86-64, where it once took
// 224).
struct Conn {
  Conn(int fd_, Kind kind_) : fd(fd_), kind(kind_) {}

  int fd;
  Kind kind;
  std::int8_t shutdown_how = -1;  // a shutdown() waiting for the sends before it
  // ---- readiness (POLL_ADD): add_reader/add_writer's, the poll in the ring
  // (0: none), what completed polls saw and was not reported yet ----
  std::uint16_t interest = 0, poll_mask = 0, revents = 0;

  bool detached : 1 = false;  // the loop let go of the fd; it lives on for its requests
  bool owns_fd : 1 = false;   // fd is ours to close after the sends owed at detach (keep_sending)
  bool fixed : 1 = false;     // fd is registered in the ring's file table, at slot fd
  bool fix_wanted : 1 = false;  // a stream to register: by the first submit with its SQEs
  // Whether the stream's reads and writes go through try_recv/try_send. Code
  // that waits for readiness and makes its own syscalls (a pipe transport
  // handed a socket, a TLS library) gets readiness (POLL_ADD) instead, or a
  // multishot recv would take its bytes.
  bool recv_used : 1 = false, send_used : 1 = false;

  // ---- receiving (stream) ----
  bool recv_on : 1 = false;      // a reader armed once: keep a receive going while below the cap
  bool recv_armed : 1 = false;   // the multishot recv is in the ring
  bool recv_cancel : 1 = false;  // past the cap: cancel it at the next submit
  bool starved : 1 = false;      // the ring ran dry: re-armed once buffers come back
  // While starved, a parked reader still progresses: one-shot recvs into a
  // buffer of its own (`own`), one at a time, so that readers that do not
  // read cannot stall the ones that do by holding every buffer of the ring.
  bool own_armed : 1 = false, own_queued : 1 = false;
  bool eof : 1 = false;  // sticky

  // ---- accepting (listener) ----
  bool accept_on : 1 = false, accept_armed : 1 = false, accept_cancel : 1 = false;

  // ---- sending (stream) ----
  bool send_inflight : 1 = false;
  bool drained : 1 = false;  // the queue emptied since a writer was last told

  // ---- readiness ----
  bool poll_removing : 1 = false;
  bool poll_dead : 1 = false;   // the fd went bad (EBADF): no more polls
  bool connecting : 1 = false;  // start_connect() said EINPROGRESS

  // ---- what the loop waits for (arm()) and the backend's work lists ----
  bool want_read : 1 = false, want_write : 1 = false;
  bool in_prep : 1 = false, in_ready : 1 = false;

  std::int16_t recv_error = 0;  // sticky, -errno (errno < 4096)
  std::int16_t send_error = 0;  // sticky, -errno
  Fifo<Chunk> chunks;
  std::unique_ptr<Rare> rare;       // a listener's from its first try_accept(), a stream's while it has an own buffer
  std::unique_ptr<SendQueue> out;   // while sends are owed

  std::size_t queued_out() const noexcept { return out ? out->size() : 0; }
  bool sends_owed() const noexcept { return send_inflight || queued_out() > 0; }
  bool in_ring() const noexcept {
    return recv_armed || own_armed || accept_armed || send_inflight || poll_mask != 0;
  }
};

static_assert(sizeof(Conn) <= 56, "an idle connection's Conn: a 64-byte heap chunk");

inline std::uint64_t tag(const Conn* c, Op op) noexcept {
  return reinterpret_cast<std::uintptr_t>(c) | op;
}

// An fd's entry in the loop's table: the loop's half and ours.
struct Entry : FdSlot {
  Conn* conn = nullptr;
};

}  // namespace corio::detail::uring
