// TlsSession's calls that do not wait (see tls_session.hpp): construction
// and the client's settings, settling an SSL_* call's result, output to the
// socket and the pump behind it, pulls of ciphertext, the goodbye's
// close_notify and extra_info.
#include "net/tls_session.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

namespace corio::detail {

namespace {

// Ciphertext read from the inner transport at a time: a full record and more.
constexpr std::size_t kFeedChunk = 32 * 1024;
// How long a connection is quiet before OpenSSL's buffers go back (rest()):
// past the gap between two requests of a busy connection, well within the
// seconds an idle one waits.
constexpr std::chrono::milliseconds kRestDelay{50};

struct BioFree {
  void operator()(BIO* bio) const noexcept { BIO_free(bio); }
};

bool is_ip_address(const std::string& name) {
  in6_addr addr{};  // room for either family
  return ::inet_pton(AF_INET, name.c_str(), &addr) == 1 ||
         ::inet_pton(AF_INET6, name.c_str(), &addr) == 1;
}

}  // namespace

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

Coro<void> pump_output(Ref<TlsSession> ref) {
  TlsSession& s = *ref;
  // However the pump ends (CancelledError at loop close included), it is
  // over and wait_writable() wakes.
  RunScope scope{s.pumping, s.drained};
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
  out.trim();                  // room made for records that did not come
  if (pumping || out.empty()) return;
  try {
    out.consume(inner->try_write(out.view()));
  } catch (const std::system_error&) {
    fail_output(std::current_exception());
    return;
  }
  if (!out.empty()) start_pump();
}

TlsSession::~TlsSession() {
  if (rest_timer) rest_timer->cancel();  // its callback holds this
}

void TlsSession::rest() noexcept {
  if (rested) return;
  rested = true;
  quiet_since = loop.pass_time();  // twice a request: no clock read (event_loop.hpp)
  if (!rest_timer) arm_rest(kRestDelay);
}

void TlsSession::arm_rest(std::chrono::duration<double> delay) noexcept {
  try {
    rest_timer = loop.call_later(delay, [this] { quiet_for_a_while(); });
  } catch (...) {
    SSL_free_buffers(ssl.get());  // no timer (out of memory, or the loop is closing): now
  }
}

void TlsSession::quiet_for_a_while() noexcept {
  rest_timer.reset();
  if (!rested) return;  // busy again: its next rest() arms the timer
  const std::chrono::duration<double> quiet(loop.pass_time() - quiet_since);
  if (quiet < kRestDelay) {
    arm_rest(kRestDelay - quiet);
    return;
  }
  SSL_free_buffers(ssl.get());
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

}  // namespace corio::detail
