// TlsSession: the state TlsTransport (tls.hpp) and its background output
// task share: OpenSSL's SSL over a BIO of two ByteBuffers (tls_bio.hpp),
// on another transport. Its plain calls are in tls_session.cpp; the
// coroutines that wait (handshake, feeds, goodbye) and the Transport calls
// in tls_transport.cpp.
//
// Bytes in: the reader tries, as over any transport (transport.hpp's
// contract). try_read() calls SSL_read; when OpenSSL wants ciphertext it
// tries the inner transport once into `in` ("pulls") and calls again; when
// nothing is there, it rests (OpenSSL's record buffers go back once it has
// stayed quiet a moment: rest()) and returns nullopt, and the reader awaits
// the inner transport's readability. So an idle connection holds no buffer
// of ours or OpenSSL's and no coroutine frame of the transport's.
//
// The handshake and close()'s goodbye wait for ciphertext themselves
// ("feed"). One task feeds at a time; another that needs bytes meanwhile
// waits for that feed to end and retries. A goodbye that needs bytes while
// the reader waits for readability (one waiter per socket) waits for the
// reader's next try instead (if that read is cancelled meanwhile, for the
// shutdown timeout; a read cancelled before the goodbye began is seen as
// gone, and the goodbye reads for itself); a read that starts waiting while
// a goodbye waits for the socket fails as a second waiter does (RuntimeError).
//
// Bytes out: whatever OpenSSL writes (records, handshake flights, alerts,
// close_notify) lands in `out` and is sent at once as far as the socket
// takes it; the rest goes out from a background task, the pump, the only
// task that waits for the socket to be writable. try_write
// takes new plaintext only while `out` is empty (so at most one chunk of
// ciphertext waits here) and wait_writable() waits for the pump: the
// streams' flow control keeps working on plaintext, and output that no
// writer asked for (a close_notify after write_eof(), an answer to a TLS 1.3
// KeyUpdate) still goes out.
//
// Lifetime rules:
//   1. TlsSession is counted by the transport and by the pump while it runs
//      (plain integer: loop-affine). Feeds and the goodbye run inside calls
//      for which the connection keeps the transport alive.
//   2. The transport's destructor closes the inner transport: a pump still
//      running wakes with EBADF and ends, dropping the last reference.
//   3. After a fatal TLS error OpenSSL forbids SSL_shutdown: `failed` makes
//      the goodbye say nothing.
#pragma once

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <corio/event.hpp>
#include <corio/event_loop.hpp>
#include <corio/handle.hpp>

#include "net/tls.hpp"
#include "net/tls_bio.hpp"

namespace corio::detail {

struct SslFree {
  void operator()(SSL* ssl) const noexcept { SSL_free(ssl); }
};

// A background run (the pump, a feed) that ends however its coroutine
// does: its flag cleared, its Event set for those waiting on it.
struct RunScope {
  bool& running;
  Event& ended;
  ~RunScope() {
    running = false;
    ended.set();
  }
};

class TlsSession {
 public:
  TlsSession(EventLoop& l, std::unique_ptr<Transport> in, const SslContext& ctx, TlsParams p);
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // After an SSL_* call that returned r (1: success): sends what the call
  // wrote (an alert too, telling the peer why we stop) and returns
  // SSL_get_error's verdict if the caller handles it: SSL_ERROR_NONE, and
  // when `reading` SSL_ERROR_ZERO_RETURN and SSL_ERROR_WANT_READ. Any other
  // outcome is thrown (tls.hpp's tls_error). Clear OpenSSL's error queue
  // before the call: the verdict reads it.
  int settle(int r, bool reading);
  // The write BIO's bytes to the socket, a pump for what it does not take.
  void kick_output();
  // SSL_read into buf: the bytes read, 0 after the peer's close_notify (the
  // clean EOF), nullopt when OpenSSL needs ciphertext first. A read that
  // took everything received rests: a connection that stops reading here
  // (a client's pooled one) keeps no record buffer either.
  std::optional<std::size_t> read(std::span<char> buf) {
    std::size_t n = 0;
    clear_errors();
    rested = false;
    const int verdict = settle(SSL_read_ex(ssl.get(), buf.data(), buf.size(), &n), true);
    if (verdict == SSL_ERROR_NONE) {
      if (wire.in.empty() && SSL_has_pending(ssl.get()) == 0) rest();
      return n;
    }
    if (verdict == SSL_ERROR_ZERO_RETURN) return 0;
    return std::nullopt;
  }
  // One try to read the inner transport into `in`: true if bytes or EOF came.
  bool pull();
  // The reader found nothing to read: OpenSSL's record buffers (a read and
  // a write buffer, about 34 KiB) go back to the allocator once the
  // connection has stayed quiet for kRestDelay (OpenSSL keeps them if a
  // record is half read). Not at once: a busy connection rests between
  // every two requests, and freeing and allocating them again each time was
  // 2,800 of the 38,000 instructions of a GET over h2 and TLS (callgrind,
  // h2load -c100 -m1). One timer per quiet spell, not per rest: it looks
  // when it fires, as the h2 idle timer does.
  void rest() noexcept;
  // The rest timer's end: buffers freed if still quiet (rested) long enough.
  void quiet_for_a_while() noexcept;
  ~TlsSession();
  // ERR_clear_error() walks all 16 entries of the thread's queue (850
  // instructions, twice per HTTP/2 request over TLS: callgrind); an empty
  // queue needs only the look.
  static void clear_errors() noexcept {
    if (ERR_peek_error() != 0) ERR_clear_error();
  }
  void fail_output(std::exception_ptr e) noexcept {
    out_error = std::move(e);
    wire.out.clear();
  }
  void rethrow_output_error() const {
    if (out_error) std::rethrow_exception(out_error);
  }
  void send_close_notify();
  std::string extra_info(std::string_view name) const;

  std::uint32_t refs = 1;
  EventLoop& loop;
  std::unique_ptr<Transport> inner;
  SslContext context;  // the SSL_CTX's ALPN callback reads it: alive as long as ssl
  TlsParams params;
  CipherBuffers wire;      // ciphertext both ways; ssl's BIO points here
  std::unique_ptr<SSL, SslFree> ssl;
  std::exception_ptr out_error;  // the socket failed: writing raises it
  Event drained;                 // set while no pump runs
  Event fed;                     // set while no feed runs
  Event read_tried;              // set while the reader does not wait for readability
  bool pumping = false;
  bool feeding = false;
  bool reader_waits = false;
  bool failed = false;
  bool rested = false;  // rest() was called, and no SSL_* call came since
  double quiet_since = 0;               // loop time of the last rest() after an SSL_* call
  std::optional<TimerHandle> rest_timer;  // armed while OpenSSL may hold buffers of a quiet spell

 private:
  void configure_client();
  void start_pump();
  void arm_rest(std::chrono::duration<double> delay) noexcept;
};

}  // namespace corio::detail
