// TlsTransport (see tls.hpp): OpenSSL over a BIO of two ByteBuffers
// (tls_bio.hpp), on another transport.
//
// Bytes in: the reader tries, as over any transport (transport.hpp's
// contract). try_read() calls SSL_read; when OpenSSL wants ciphertext it
// tries the inner transport once into `in` ("pulls") and calls again; when
// nothing is there, it gives OpenSSL's record buffers back (SSL_free_buffers:
// the reader goes idle) and returns nullopt, and the reader awaits the inner
// transport's readability. So an idle connection holds no buffer of ours
// or OpenSSL's and no coroutine frame of the transport's.
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include <corio/event.hpp>
#include <corio/timeout.hpp>

#include "net/tls.hpp"
#include "net/tls_bio.hpp"

namespace corio::detail {

namespace {

// Plaintext per SSL_write: four full records; as much ciphertext at most
// waits in `out` for the socket.
constexpr std::size_t kWriteChunk = 64 * 1024;
// Ciphertext read from the inner transport at a time: a full record and more.
constexpr std::size_t kFeedChunk = 32 * 1024;
// What the goodbye reads (and drops) at a time.
constexpr std::size_t kDropChunk = 4 * 1024;

struct SslFree {
  void operator()(SSL* ssl) const noexcept { SSL_free(ssl); }
};
struct BioFree {
  void operator()(BIO* bio) const noexcept { BIO_free(bio); }
};

bool is_ip_address(const std::string& name) {
  in6_addr addr{};  // room for either family
  return ::inet_pton(AF_INET, name.c_str(), &addr) == 1 ||
         ::inet_pton(AF_INET6, name.c_str(), &addr) == 1;
}

}  // namespace

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
  // The reader found nothing to read: OpenSSL's record buffers go back to
  // the allocator until the peer speaks again (OpenSSL keeps them if a
  // record is half read).
  // Once until OpenSSL is called again: a reader that finds nothing several
  // times per request (an HTTP/2 connection's task, woken by its streams)
  // paid SSL_free_buffers' 750 instructions each time (callgrind).
  void rest() noexcept {
    if (rested) return;
    SSL_free_buffers(ssl.get());
    rested = true;
  }
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
  bool rested = false;  // rest() freed OpenSSL's buffers, and no SSL_* call came since

 private:
  void configure_client();
  void start_pump();
};

void add_ref(TlsSession* s) noexcept { ++s->refs; }
void release(TlsSession* s) noexcept {
  if (--s->refs == 0) delete s;
}

TlsSession::TlsSession(EventLoop& l, std::unique_ptr<Transport> in, const SslContext& ctx,
                       TlsParams p)
    : loop(l),
      inner(std::move(in)),
      context(ctx),
      params(std::move(p)),
      ssl(SSL_new(SslContextAccess::impl(ctx).ctx)) {
  drained.set();
  fed.set();
  read_tried.set();
  BIO* bio = ssl ? new_cipher_bio(wire) : nullptr;
  if (!bio) throw std::bad_alloc();
  SSL_set_bio(ssl.get(), bio, bio);  // one reference, both ways
  if (params.server_side) {
    SSL_set_accept_state(ssl.get());
  } else {
    SSL_set_connect_state(ssl.get());
    configure_client();
  }
}

// SNI and the name the certificate must carry. RFC 6066 allows only host
// names in SNI, so an IP address is only checked (against the IP SANs).
void TlsSession::configure_client() {
  // The one OpenSSL call that returns 0 on success.
  if (params.alpn && SSL_set_alpn_protos(ssl.get(), reinterpret_cast<const unsigned char*>(params.alpn->data()),
                                         static_cast<unsigned int>(params.alpn->size())) != 0) {
    throw std::bad_alloc();
  }
  const std::string& name = params.server_hostname;
  if (name.empty()) return;
  ERR_clear_error();
  const bool ip = is_ip_address(name);
  int ok = ip ? 1 : static_cast<int>(SSL_set_tlsext_host_name(ssl.get(), name.c_str()));
  if (ok == 1 && SslContextAccess::impl(context).check_hostname) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl.get());
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
            : X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
  }
  if (ok != 1) std::rethrow_exception(tls_error(ssl.get(), name));
}

int TlsSession::settle(int r, bool reading) {
  const int verdict = r == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl.get(), r);
  const bool handled =
      verdict == SSL_ERROR_NONE ||
      (reading && (verdict == SSL_ERROR_ZERO_RETURN || verdict == SSL_ERROR_WANT_READ));
  std::exception_ptr failure;
  if (!handled) {
    failed = true;
    failure = tls_error(ssl.get(), params.server_hostname);
  }
  kick_output();
  if (failure) std::rethrow_exception(failure);
  return verdict;
}

namespace {

// Clears `pumping` however the pump ends (CancelledError at loop close
// included) and wakes wait_writable().
struct PumpScope {
  TlsSession& s;
  ~PumpScope() {
    s.pumping = false;
    s.drained.set();
  }
};

Coro<void> pump_output(Ref<TlsSession> ref) {
  TlsSession& s = *ref;
  PumpScope scope{s};
  try {
    for (;;) {
      const std::size_t n = s.inner->try_write(s.wire.out.view());
      s.wire.out.consume(n);
      if (s.wire.out.empty()) break;
      if (n == 0) co_await s.inner->wait_writable();
    }
  } catch (const std::system_error&) {
    s.fail_output(std::current_exception());
  }
}

}  // namespace

void TlsSession::kick_output() {
  ByteBuffer& out = wire.out;
  if (out_error) out.clear();  // nothing more can go
  if (pumping || out.empty()) return;
  try {
    out.consume(inner->try_write(out.view()));
  } catch (const std::system_error&) {
    fail_output(std::current_exception());
    return;
  }
  if (!out.empty()) start_pump();
}

bool TlsSession::pull() {
  if (wire.in_eof) return true;
  const std::span<char> room = wire.in.prepare(kFeedChunk);
  std::optional<std::size_t> got;
  try {
    got = inner->try_read(room);
  } catch (...) {
    wire.in.trim();
    throw;
  }
  if (got) wire.in.commit(*got);
  wire.in.trim();  // no storage unless bytes came
  if (got && *got == 0) wire.in_eof = true;  // OpenSSL sees EOF from now on
  return got.has_value();
}

void TlsSession::start_pump() {
  pumping = true;
  drained.clear();
  try {
    loop.create_task(pump_output(Ref<TlsSession>::share(this)));
  } catch (...) {
    pumping = false;
    drained.set();
    fail_output(std::current_exception());
  }
}

void TlsSession::send_close_notify() {
  if (failed || (SSL_get_shutdown(ssl.get()) & SSL_SENT_SHUTDOWN) != 0) return;
  ERR_clear_error();
  rested = false;
  // 0 ("not finished") is the expected result: the peer's close_notify is
  // read by SSL_read, which goes on working after ours went out.
  SSL_shutdown(ssl.get());
  ERR_clear_error();
  kick_output();
}

std::string TlsSession::extra_info(std::string_view name) const {
  SSL* s = ssl.get();
  if (name == "ssl_version") return SSL_get_version(s);
  if (name == "cipher") return SSL_get_cipher_name(s);
  if (name == "alpn_protocol") {
    const unsigned char* protocol = nullptr;
    unsigned int len = 0;
    SSL_get0_alpn_selected(s, &protocol, &len);
    return protocol ? std::string(reinterpret_cast<const char*>(protocol), len) : std::string();
  }
  if (name == "server_hostname") {
    const char* sni = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
    return sni ? sni : "";
  }
  if (name == "peercert_subject") {
    X509* cert = SSL_get0_peer_certificate(s);
    if (!cert) return {};
    std::unique_ptr<BIO, BioFree> text(BIO_new(BIO_s_mem()));
    if (!text) throw std::bad_alloc();
    X509_NAME_print_ex(text.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
    char* data = nullptr;
    const long len = BIO_get_mem_data(text.get(), &data);
    return len > 0 ? std::string(data, static_cast<std::size_t>(len)) : std::string();
  }
  return {};
}

// ---- the coroutines ------------------------------------------------------------------

namespace {

struct FeedScope {
  TlsSession& s;
  ~FeedScope() {
    s.feeding = false;
    s.fed.set();
  }
};

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
  FeedScope scope{s};
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

std::size_t encrypt(TlsSession& s, std::string_view data) {
  if (data.empty()) return 0;  // SSL_write refuses 0 bytes
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
// socket keeps up. Copying plaintext costs little beside encrypting it. Up
// to a chunk and a record: an HTTP/2 pass (64 KiB of frames and their
// headers) goes whole, not as a chunk and a small tail left to the pump.
std::size_t TlsTransport::try_writev(std::span<const std::string_view> pieces) {
  if (pieces.size() == 1) return try_write(pieces.front());
  TlsSession& s = *s_;
  if (!takes_plaintext(s)) return 0;
  constexpr std::size_t kGathered = kWriteChunk + 16 * 1024;
  std::size_t total = 0;
  for (const std::string_view piece : pieces) total += piece.size();
  std::string plain;
  plain.reserve(std::min(total, kGathered));
  for (const std::string_view piece : pieces) {
    plain.append(piece.substr(0, kGathered - plain.size()));
    if (plain.size() == kGathered) break;
  }
  return encrypt(s, plain);
}

Coro<void> TlsTransport::wait_writable() { return wait_drained(s_); }

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
