// TLS inside the library: what SslContext hides (OpenSSL's SSL_CTX), the
// errors OpenSSL's queue turns into, and TlsTransport, the Transport that
// runs TLS over another one.
//
// TlsTransport keeps OpenSSL off the socket: the SSL object reads from and
// writes to buffers (tls_bio.hpp), and the transport moves bytes between
// those and the transport it wraps. So the TLS state machine never sees a descriptor,
// and works the same over any backend (DESIGN.md: "one TLS state machine
// for both backends").
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <corio/errors.hpp>
#include <corio/ssl.hpp>

#include "net/transport.hpp"

namespace corio {

struct SslContext::Impl {
  explicit Impl(SSL_CTX* c, bool server) noexcept : ctx(c), server_side(server) {}
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() { SSL_CTX_free(ctx); }

  SSL_CTX* ctx;
  bool server_side;
  bool check_hostname = false;
  // The server's ALPN protocols in wire format, for its selection callback
  // (a client hands them to OpenSSL, which keeps its own copy).
  std::string alpn;
};

namespace detail {

struct SslContextAccess {
  static SslContext::Impl& impl(const SslContext& c) noexcept { return *c.impl_; }
};

// The first error in OpenSSL's (thread-local) queue as an exception, the
// queue cleared: SslEofError for a truncated stream,
// SslCertVerificationError with ssl's verify result for a rejected
// certificate (naming `hostname` on a name mismatch), SslError otherwise.
std::exception_ptr tls_error(const SSL* ssl, const std::string& hostname);

struct TlsParams {
  bool server_side = false;
  // Client: the name sent as SNI (unless it is an IP address) and checked
  // against the certificate when the context checks host names; "" for none.
  std::string server_hostname;
  std::chrono::milliseconds shutdown_timeout{30'000};
  // Client: ALPN protocols in wire format offered instead of the context's.
  std::optional<std::string> alpn;
};

// ALPN's wire format: each name preceded by its length (ValueError for a
// name empty or over 255 bytes).
std::string alpn_wire(const std::vector<std::string>& protocols);

// ValueError unless a client connection can use this context and name: a
// client context, and a name when it checks host names. Before connecting.
void check_client_tls(const SslContext& context, const std::string& server_hostname);

class TlsSession;
void add_ref(TlsSession* s) noexcept;
void release(TlsSession* s) noexcept;

// TLS over `inner`. Lifetime: the connection owns the transport; the
// transport and its background output task share the TLS state (a
// TlsSession), so the task never outlives what it writes from. Destroying
// the transport closes the socket under that task.
class TlsTransport final : public Transport {
 public:
  TlsTransport(EventLoop& loop, std::unique_ptr<Transport> inner, const SslContext& context,
               TlsParams params);
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;
  ~TlsTransport() override { close(); }

  // The handshake, before anything else: TimeoutError after `timeout`,
  // SslError (SslCertVerificationError, SslEofError) if it fails.
  Coro<void> handshake(std::chrono::milliseconds timeout);

  std::optional<std::size_t> try_read(std::span<char> buf) override;
  IoWait readable() override;
  std::size_t try_write(std::string_view data) override;
  std::size_t try_writev(std::span<const std::string_view> pieces) override;
  Coro<void> wait_writable() override;
  // Ciphertext not yet handed to the inner transport (the socket was full):
  // what wait_writable() waits for. A writer above (HTTP/2's passes) sees
  // from it that the socket is behind, before its next write would be
  // refused and copied into its buffer.
  std::size_t unsent() const noexcept override;
  void shutdown_write() override;
  void close() noexcept override;
  Coro<void> goodbye() override;
  std::string extra_info(std::string_view name) const override;
  const SocketAddress& peer_address() const noexcept override;
  const SocketAddress& local_address() const noexcept override;
  int fileno() const noexcept override;

 private:
  Ref<TlsSession> s_;
};

}  // namespace detail
}  // namespace corio
