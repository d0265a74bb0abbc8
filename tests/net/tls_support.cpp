// The TLS tests' certificates and command-line peers (see tls_support.hpp).
#include "net/tls_support.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

extern char** environ;

namespace corio_net_test {

namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test PKI: ") + what + " failed");
}

KeyPtr new_key() {
  KeyPtr key(EVP_EC_gen("P-256"), EVP_PKEY_free);  // fast to make, small to send
  check(key != nullptr, "EVP_EC_gen");
  return key;
}

void add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  check(ext != nullptr, value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A CA certificate when issuer is null (self-signed), else a leaf for the
// loopback names signed by issuer.
CertPtr make_cert(const char* cn, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key, long serial) {
  CertPtr cert(X509_new(), X509_free);
  check(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("corio tests"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509* signer = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  if (!issuer) {
    add_ext(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
    add_ext(cert.get(), signer, NID_subject_key_identifier, "hash");
  } else {
    add_ext(cert.get(), signer, NID_basic_constraints, "CA:FALSE");
    add_ext(cert.get(), signer, NID_key_usage, "critical,digitalSignature");
    add_ext(cert.get(), signer, NID_ext_key_usage, "serverAuth,clientAuth");
    add_ext(cert.get(), signer, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1");
    add_ext(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
  }
  check(X509_sign(cert.get(), issuer ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

void write_pem(const std::string& path, X509* cert, EVP_PKEY* key) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  check(f != nullptr, "fopen");
  const bool ok = cert ? PEM_write_X509(f, cert) == 1
                       : PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(f);
  check(ok, "PEM_write");
}

// A CA and a "localhost" certificate it signed, written under dir/<tag>-*.
void make_authority(const std::string& dir, const std::string& tag, std::string& ca_cert,
                    std::string& leaf_cert, std::string& leaf_key) {
  KeyPtr ca_key = new_key();
  CertPtr ca = make_cert(("corio test CA " + tag).c_str(), ca_key.get(), nullptr, nullptr, 1);
  KeyPtr key = new_key();
  CertPtr leaf = make_cert("localhost", key.get(), ca.get(), ca_key.get(), 2);
  ca_cert = dir + "/" + tag + "-ca.pem";
  leaf_cert = dir + "/" + tag + "-cert.pem";
  leaf_key = dir + "/" + tag + "-key.pem";
  write_pem(ca_cert, ca.get(), nullptr);
  write_pem(leaf_cert, leaf.get(), nullptr);
  write_pem(leaf_key, nullptr, key.get());
}

struct OwnedPki : Pki {
  OwnedPki() {
    char tmpl[] = "/tmp/corio-tls-XXXXXX";
    check(::mkdtemp(tmpl) != nullptr, "mkdtemp");
    dir = tmpl;
    make_authority(dir, "trusted", ca_cert, server_cert, server_key);
    std::string rogue_ca;
    make_authority(dir, "rogue", rogue_ca, rogue_cert, rogue_key);
  }
  OwnedPki(const OwnedPki&) = delete;
  OwnedPki& operator=(const OwnedPki&) = delete;
  ~OwnedPki() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

}  // namespace

const Pki& pki() {
  static const OwnedPki made;
  return made;
}

corio::SslContext trusting_client() {
  corio::SslContext ctx = corio::SslContext::client();
  ctx.load_verify_locations(pki().ca_cert);
  return ctx;
}

corio::SslContext test_server() {
  return corio::SslContext::server(pki().server_cert, pki().server_key);
}

bool have_openssl_cli() { return std::system("openssl version >/dev/null 2>&1") == 0; }

Child::Child(const std::vector<std::string>& argv) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw std::system_error(errno, std::generic_category(), "socketpair");
  }
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  io = Socket(fds[0]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int err = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (err != 0) {
    pid_ = -1;
    throw std::system_error(err, std::generic_category(), "posix_spawnp " + argv[0]);
  }
}

void Child::kill() noexcept {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

Coro<std::string> Child::read_line_with(std::string needle) {
  for (;;) {
    std::size_t start = 0;
    for (std::size_t end; (end = pending_.find('\n', start)) != std::string::npos;
         start = end + 1) {
      std::string line = pending_.substr(start, end - start + 1);
      if (line.find(needle) != std::string::npos) {
        pending_.erase(0, end + 1);
        co_return line;
      }
    }
    pending_.erase(0, start);
    std::string more = co_await corio::get_running_loop().sock_recv(io, 4096);
    if (more.empty()) co_return std::string();
    pending_ += more;
  }
}

}  // namespace corio_net_test
