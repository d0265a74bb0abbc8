// Helpers for the TLS tests: throwaway certificates made once per test
// process, the contexts the tests use, and `openssl` command-line peers.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "net/net_support.hpp"

namespace corio_net_test {

// A CA and certificates for "localhost", 127.0.0.1 and ::1, made with
// OpenSSL's API in a temporary directory that is removed at exit.
struct Pki {
  std::string dir;
  std::string ca_cert;      // the CA the tests trust
  std::string server_cert;  // signed by it (its EKU allows client use too)
  std::string server_key;
  std::string rogue_cert;  // the same names, signed by a CA nobody trusts
  std::string rogue_key;
};
const Pki& pki();

// A client context that trusts the tests' CA.
corio::SslContext trusting_client();
// A server context presenting the CA-signed certificate.
corio::SslContext test_server();

inline corio::ServerOptions tls_server_options(corio::SslContext ctx = test_server()) {
  corio::ServerOptions opts;
  opts.ssl = std::move(ctx);
  return opts;
}

inline corio::ConnectOptions tls_options(corio::SslContext ctx = trusting_client()) {
  corio::ConnectOptions opts;
  opts.ssl = std::move(ctx);
  return opts;
}

// echo_lines over TLS on 127.0.0.1, port 0.
inline Coro<Server> tls_echo_server(corio::ServerOptions opts = tls_server_options()) {
  co_return co_await corio::start_server(echo_lines, "127.0.0.1", 0, opts);
}

// `openssl` on PATH (the interoperability tests skip without it).
bool have_openssl_cli();

// A child process with stdin and stdout on a socket pair, killed (SIGKILL)
// and reaped by the destructor; stderr goes to /dev/null.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv);
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() { kill(); }
  void kill() noexcept;
  // Reads the child's stdout up to a line containing `needle` and returns
  // that line ("" if the child ended first).
  Coro<std::string> read_line_with(std::string needle);

  Socket io;  // our end: the child's stdin and stdout

 private:
  pid_t pid_ = -1;
  std::string pending_;  // read but not yet returned
};

}  // namespace corio_net_test
