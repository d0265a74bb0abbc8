// TlsTransport (see tls.hpp) over a TlsSession (tls_session.hpp, which
// says how bytes flow and who owns what): the coroutines that wait for the
// peer (handshake, feeds, goodbye) and the Transport calls.

#include <algorithm>
#include <array>

#include <corio/timeout.hpp>

#include "net/tls_session.hpp"

namespace corio::detail {

namespace {

// Plaintext per SSL_write: four full records; as much ciphertext at most
// waits in `out` for the socket.
constexpr std::size_t kWriteChunk = 64 * 1024;
// What the goodbye reads (and drops) at a time.
constexpr std::size_t kDropChunk = 4 * 1024;
// A record's plaintext at most (OpenSSL's default max_send_fragment), and
// what encrypting adds to it at most: the header, and the explicit IV, MAC
// or tag, padding and content type of any cipher suite.
constexpr std::size_t kRecordPlaintext = SSL3_RT_MAX_PLAIN_LENGTH;
constexpr std::size_t kRecordOverhead = SSL3_RT_HEADER_LENGTH + SSL3_RT_MAX_ENCRYPTED_OVERHEAD;

}  // namespace

// ---- the coroutines ------------------------------------------------------------------

namespace {

// Ciphertext into `in`, waiting for it; or, if another task is feeding or
// the reader waits for readability, the end of that wait. Only once OpenSSL
// read `in` dry.
Coro<void> feed(TlsSession& s) {
  if (s.feeding) {
    co_await s.fed.wait();
    co_return;
  }
  // A reader whose wait was cancelled will not try again: its flag is
  // stale, and the goodbye reads for itself. (An inner transport with no fd
  // of its own is taken at its word.)
  const int fd = s.inner->fileno();
  if (s.reader_waits && fd >= 0 && !s.loop.io().read_parked(fd)) s.reader_waits = false;
  if (s.reader_waits) {
    co_await s.read_tried.wait();
    co_return;
  }
  s.feeding = true;
  s.fed.clear();
  RunScope scope{s.feeding, s.fed};
  while (!s.pull()) co_await s.inner->readable();
}

Coro<void> run_handshake(TlsSession& s) {
  for (;;) {
    ERR_clear_error();
    s.rested = false;
    const int verdict = s.settle(SSL_do_handshake(s.ssl.get()), true);
    s.rethrow_output_error();
    if (verdict == SSL_ERROR_NONE) co_return;
    if (verdict == SSL_ERROR_ZERO_RETURN) {
      throw SslEofError(0, "the peer closed the connection during the handshake");
    }
    co_await feed(s);
  }
}

Coro<void> bounded_handshake(Ref<TlsSession> ref, std::chrono::milliseconds limit) {
  try {
    co_await corio::timeout(limit, run_handshake(*ref));
  } catch (const TimeoutError&) {
    throw TimeoutError("SSL handshake is taking longer than " + std::to_string(limit.count()) +
                       " ms: aborting the connection");
  }
}

Coro<void> wait_drained(Ref<TlsSession> ref) {
  TlsSession& s = *ref;
  while (s.pumping) co_await s.drained.wait();
  s.rethrow_output_error();
}

// close_notify both ways (RFC 8446 6.1): ours out, then the peer's, reading
// and dropping what it still sends before it.
Coro<void> exchange_close_notify(TlsSession& s) {
  if (s.failed) co_return;
  s.send_close_notify();
  while (s.pumping) co_await s.drained.wait();
  if (s.out_error) co_return;
  std::array<char, kDropChunk> room;
  for (;;) {
    std::size_t n = 0;
    ERR_clear_error();
    s.rested = false;
    const int verdict = s.settle(SSL_read_ex(s.ssl.get(), room.data(), room.size(), &n), true);
    if (verdict == SSL_ERROR_ZERO_RETURN) co_return;
    if (verdict == SSL_ERROR_WANT_READ) co_await feed(s);
  }
}

Coro<void> say_goodbye(Ref<TlsSession> ref) {
  try {
    co_await corio::timeout(ref->params.shutdown_timeout, exchange_close_notify(*ref));
  } catch (const TimeoutError&) {
    // The peer did not answer in time: the connection closes regardless.
  } catch (const std::system_error&) {
    // The connection broke, or ended without close_notify: nothing to wait for.
  }
}

}  // namespace

// ---- TlsTransport ----------------------------------------------------------------------

TlsTransport::TlsTransport(EventLoop& loop, std::unique_ptr<Transport> inner,
                           const SslContext& context, TlsParams params)
    : s_(new TlsSession(loop, std::move(inner), context, std::move(params))) {}

Coro<void> TlsTransport::handshake(std::chrono::milliseconds timeout) {
  return bounded_handshake(s_, timeout);
}

std::optional<std::size_t> TlsTransport::try_read(std::span<char> buf) {
  TlsSession& s = *s_;
  if (s.reader_waits) {  // its wait is over: a goodbye waiting for it retries
    s.reader_waits = false;
    s.read_tried.set();
  }
  // With nothing received and nothing inside OpenSSL, the socket first:
  // an idle try costs no SSL_read.
  bool want = s.wire.in.empty() && !s.wire.in_eof && SSL_has_pending(s.ssl.get()) == 0;
  for (;;) {
    if (want && !s.pull()) {
      s.rest();
      return std::nullopt;
    }
    if (const std::optional<std::size_t> n = s.read(buf)) return n;
    want = true;  // OpenSSL read `in` dry
  }
}

IoWait TlsTransport::readable() {
  TlsSession& s = *s_;
  s.reader_waits = true;
  s.read_tried.clear();
  return s.inner->readable();
}

namespace {

// New plaintext is taken only while no ciphertext waits in `out` (the
// top of the file); meanwhile the pump is kicked, in case it ended early.
bool takes_plaintext(TlsSession& s) {
  s.rethrow_output_error();
  if (s.wire.out.empty()) return true;
  s.kick_output();
  return false;
}

// OpenSSL hands `out` one record at a time; appended so, the records of a
// 64 KiB write grew it twice, copying what it held each time (16 KiB, then
// 48 KiB: as many bytes again as were written). Room for all of them first.
// kick_output() gives the room back if nothing was written into it.
void make_room_for_records(ByteBuffer& out, std::size_t plaintext) {
  const std::size_t records = (plaintext + kRecordPlaintext - 1) / kRecordPlaintext;
  out.prepare(plaintext + records * kRecordOverhead);
}

std::size_t encrypt(TlsSession& s, std::string_view data) {
  if (data.empty()) return 0;  // SSL_write refuses 0 bytes
  make_room_for_records(s.wire.out, data.size());
  std::size_t n = 0;
  s.clear_errors();
  s.rested = false;
  s.settle(SSL_write_ex(s.ssl.get(), data.data(), data.size(), &n), false);
  s.rethrow_output_error();
  return n;
}

}  // namespace

std::size_t TlsTransport::try_write(std::string_view data) {
  TlsSession& s = *s_;
  return takes_plaintext(s) ? encrypt(s, data.substr(0, kWriteChunk)) : 0;
}

// The pieces as one plaintext: one SSL_write makes full records of them and
// one send, where writing them one by one would make a record of each (an
// HTTP/2 frame's 9-byte header among them) and a send of each while the
// socket keeps up. Copying plaintext costs little beside encrypting it; it
// goes into a block of the thread's BufferPool, not a fresh string (80 KiB
// malloc'ed and freed per pass, faulted in again each time). Up to a chunk
// and two records: an HTTP/2 pass (it ends past 64 KiB, by up to a frame of
// 16 KiB and its 9-byte header: h2_glue.hpp's kH2PassBytes) goes whole, not
// as a chunk and a small tail left to the writer's buffer. The block is one
// of 128 KiB either way.
std::size_t TlsTransport::try_writev(std::span<const std::string_view> pieces) {
  if (pieces.size() == 1) return try_write(pieces.front());
  TlsSession& s = *s_;
  if (!takes_plaintext(s)) return 0;
  constexpr std::size_t kGathered = kWriteChunk + 32 * 1024;
  std::size_t total = 0;
  for (const std::string_view piece : pieces) total += piece.size();
  const std::size_t want = std::min(total, kGathered);
  ByteBuffer plain;
  char* const room = plain.prepare(want).data();
  std::size_t n = 0;
  for (const std::string_view piece : pieces) {
    const std::size_t take = std::min(piece.size(), want - n);
    std::copy_n(piece.data(), take, room + n);
    n += take;
    if (n == want) break;
  }
  plain.commit(n);
  return encrypt(s, plain.view());
}

Coro<void> TlsTransport::wait_writable() { return wait_drained(s_); }

std::size_t TlsTransport::unsent() const noexcept { return s_->wire.out.size(); }

void TlsTransport::shutdown_write() {
  s_->send_close_notify();
  s_->rethrow_output_error();
}

void TlsTransport::close() noexcept { s_->inner->close(); }

Coro<void> TlsTransport::goodbye() { return say_goodbye(s_); }

std::string TlsTransport::extra_info(std::string_view name) const { return s_->extra_info(name); }

const SocketAddress& TlsTransport::peer_address() const noexcept {
  return s_->inner->peer_address();
}

const SocketAddress& TlsTransport::local_address() const noexcept {
  return s_->inner->local_address();
}

int TlsTransport::fileno() const noexcept { return s_->inner->fileno(); }

}  // namespace corio::detail
