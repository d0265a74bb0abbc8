// SslContext (see ssl.hpp) and the translation of OpenSSL's error queue
// into SslError and its kin.
//
// Defaults follow Python's ssl.create_default_context(): TLS 1.2 at least,
// renegotiation off (it only ever served attacks and would make a write
// wait for a read), the system CA store and host name checking for clients.
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <corio/c_string.hpp>
#include <corio/errors.hpp>

#include "net/tls.hpp"

namespace corio {

// ---- errors ------------------------------------------------------------------------

namespace {

class SslCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "ssl"; }
  std::string message(int code) const override {
    const char* reason = ERR_reason_error_string(static_cast<unsigned long>(code));
    return reason ? reason : "TLS error";
  }
};

std::string describe_openssl_error(unsigned long e) {
  if (const char* reason = ERR_reason_error_string(e)) return reason;
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  return text;
}

// OpenSSL's name for the verify result, and why a name did not match.
std::string verify_failure(long result, const std::string& hostname) {
  std::string text = "certificate verify failed: ";
  text += X509_verify_cert_error_string(result);
  if (result == X509_V_ERR_HOSTNAME_MISMATCH || result == X509_V_ERR_IP_ADDRESS_MISMATCH) {
    text += ", certificate is not valid for '" + hostname + "'";
  }
  return text;
}

// load_verify_locations and load_cert_chain: OpenSSL's reason, naming the file.
[[noreturn]] void throw_context_error(const std::string& what) {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  const std::string reason = e ? describe_openssl_error(e) : "failed";
  throw SslError(static_cast<int>(e), what + ": " + reason);
}

SSL_CTX* new_ctx(const SSL_METHOD* method) {
  SSL_CTX* ctx = SSL_CTX_new(method);
  if (!ctx) throw_context_error("SSL_CTX_new");
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  // No SSL_MODE_RELEASE_BUFFERS (nginx's way of not keeping the record
  // layer's read and write buffers, about 17 KiB each, on an idle
  // connection): it frees them after every record; TlsTransport frees them
  // when its reader goes idle instead (tls_transport.cpp).
  return ctx;
}

// The server's ALPN choice: its own first protocol that the client offers;
// without one, no ALPN rather than a failed handshake (as Python).
int select_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
                unsigned int inlen, void* arg) {
  const std::string& ours = static_cast<SslContext::Impl*>(arg)->alpn;
  unsigned char* chosen = nullptr;
  const int r =
      SSL_select_next_proto(&chosen, outlen, reinterpret_cast<const unsigned char*>(ours.data()),
                            static_cast<unsigned int>(ours.size()), in, inlen);
  if (r != OPENSSL_NPN_NEGOTIATED) return SSL_TLSEXT_ERR_NOACK;
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

const std::error_category& ssl_category() noexcept {
  static const SslCategory category;
  return category;
}

std::exception_ptr detail::tls_error(const SSL* ssl, const std::string& hostname) {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  const int code = static_cast<int>(e);
  if (e == 0) return std::make_exception_ptr(SslError(0, "TLS connection failed"));
  if (ERR_GET_LIB(e) == ERR_LIB_SSL) {
    if (ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
      return std::make_exception_ptr(SslEofError(code, describe_openssl_error(e)));
    }
    if (ERR_GET_REASON(e) == SSL_R_CERTIFICATE_VERIFY_FAILED) {
      const long result = SSL_get_verify_result(ssl);
      return std::make_exception_ptr(
          SslCertVerificationError(code, verify_failure(result, hostname), result));
    }
  }
  return std::make_exception_ptr(SslError(code, describe_openssl_error(e)));
}

// ---- SslContext ----------------------------------------------------------------------

SslContext SslContext::client() {
  auto impl = std::make_shared<Impl>(new_ctx(TLS_client_method()), false);
  SSL_CTX_set_verify(impl->ctx, SSL_VERIFY_PEER, nullptr);
  // A system without a CA store still gets a context; verification then
  // fails until load_verify_locations() names one.
  SSL_CTX_set_default_verify_paths(impl->ctx);
  ERR_clear_error();
  impl->check_hostname = true;
  return SslContext(std::move(impl));
}

SslContext SslContext::server(const std::string& cert_file, const std::string& key_file) {
  auto impl = std::make_shared<Impl>(new_ctx(TLS_server_method()), true);
  // Without an id context, OpenSSL refuses to resume a session of a
  // connection that presented a client certificate.
  static constexpr unsigned char kSessionContext[] = "corio";
  SSL_CTX_set_session_id_context(impl->ctx, kSessionContext, sizeof kSessionContext - 1);
  // Resumption by tickets only, as nginx's default (ssl_session_cache none):
  // the context keeps no session per connection (OpenSSL's internal cache
  // would hold one per full TLS 1.2 handshake, up to 20,480).
  SSL_CTX_set_session_cache_mode(impl->ctx, SSL_SESS_CACHE_SERVER | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SslContext context(std::move(impl));
  context.load_cert_chain(cert_file, key_file);
  return context;
}

void SslContext::load_verify_locations(const std::string& cafile) {
  check_c_string(cafile, "cafile");  // OpenSSL would load what precedes it
  if (SSL_CTX_load_verify_locations(impl_->ctx, cafile.c_str(), nullptr) != 1) {
    throw_context_error("load_verify_locations('" + cafile + "')");
  }
}

void SslContext::load_cert_chain(const std::string& cert_file, const std::string& key_file) {
  check_c_string(cert_file, "cert_file");  // OpenSSL would load what precedes it
  check_c_string(key_file, "key_file");
  if (SSL_CTX_use_certificate_chain_file(impl_->ctx, cert_file.c_str()) != 1) {
    throw_context_error("load_cert_chain: certificate '" + cert_file + "'");
  }
  if (SSL_CTX_use_PrivateKey_file(impl_->ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    throw_context_error("load_cert_chain: key '" + key_file + "'");
  }
  if (SSL_CTX_check_private_key(impl_->ctx) != 1) {
    throw_context_error("load_cert_chain: '" + key_file + "' is not the key of '" + cert_file +
                        "'");
  }
}

void SslContext::set_verify(bool enabled) {
  int mode = SSL_VERIFY_NONE;
  if (enabled)
    mode = impl_->server_side ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_PEER;
  SSL_CTX_set_verify(impl_->ctx, mode, nullptr);
  if (!enabled) impl_->check_hostname = false;
}

bool SslContext::verify() const noexcept {
  return (SSL_CTX_get_verify_mode(impl_->ctx) & SSL_VERIFY_PEER) != 0;
}

void SslContext::set_check_hostname(bool enabled) {
  if (enabled && !verify()) set_verify(true);
  impl_->check_hostname = enabled;
}

bool SslContext::check_hostname() const noexcept { return impl_->check_hostname; }

void SslContext::set_alpn_protocols(const std::vector<std::string>& protocols) {
  std::string wire = detail::alpn_wire(protocols);
  if (impl_->server_side) {
    impl_->alpn = std::move(wire);
    if (impl_->alpn.empty()) {
      SSL_CTX_set_alpn_select_cb(impl_->ctx, nullptr, nullptr);
    } else {
      SSL_CTX_set_alpn_select_cb(impl_->ctx, select_alpn, impl_.get());
    }
    return;
  }
  // The one OpenSSL call that returns 0 on success.
  if (SSL_CTX_set_alpn_protos(impl_->ctx, reinterpret_cast<const unsigned char*>(wire.data()),
                              static_cast<unsigned int>(wire.size())) != 0) {
    throw std::bad_alloc();
  }
}

bool SslContext::server_side() const noexcept { return impl_->server_side; }

std::string detail::alpn_wire(const std::vector<std::string>& protocols) {
  std::string wire;
  for (const std::string& p : protocols) {
    if (p.empty() || p.size() > 255) {
      throw ValueError("ALPN protocol names must be 1 to 255 bytes long: '" + p + "'");
    }
    wire += static_cast<char>(p.size());
    wire += p;
  }
  return wire;
}

void detail::check_client_tls(const SslContext& context, const std::string& server_hostname) {
  if (context.server_side()) {
    throw ValueError("a client connection needs a client SslContext (SslContext::client())");
  }
  if (context.check_hostname() && server_hostname.empty()) {
    throw ValueError("check_hostname requires server_hostname");
  }
  // OpenSSL takes it as a C string: SNI and the certificate check would
  // use what precedes a NUL.
  check_c_string(server_hostname, "server_hostname");
}

}  // namespace corio
