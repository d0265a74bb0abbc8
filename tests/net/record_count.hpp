// TLS records a client receives, counted with OpenSSL's message callback,
// which sees each record's inner content type: for the tests of how output
// is cut into records (a record per piece costs an AEAD and often a send).
#pragma once

#include <openssl/ssl.h>

#include <cstddef>

#include "net/tls.hpp"
#include "net/tls_support.hpp"

namespace corio_net_test {

struct RecordCount {
  std::size_t application_data = 0;
};

// TLS 1.3 protects every record as application data outside; the inner
// type tells data from tickets and alerts.
inline void count_record(int write_p, int, int content_type, const void* buf, std::size_t len, SSL*,
                         void* arg) {
  if (write_p != 0 || content_type != SSL3_RT_INNER_CONTENT_TYPE || len != 1) return;
  if (*static_cast<const unsigned char*>(buf) == SSL3_RT_APPLICATION_DATA) {
    ++static_cast<RecordCount*>(arg)->application_data;
  }
}

// A client context trusting the tests' CA that counts into `count` (which
// must outlive it); TLS 1.3 only, as the inner type is 1.3's.
inline corio::SslContext counting_client(RecordCount& count) {
  corio::SslContext ctx = trusting_client();
  SSL_CTX* raw = corio::detail::SslContextAccess::impl(ctx).ctx;
  SSL_CTX_set_min_proto_version(raw, TLS1_3_VERSION);
  SSL_CTX_set_msg_callback(raw, count_record);
  SSL_CTX_set_msg_callback_arg(raw, &count);
  return ctx;
}

}  // namespace corio_net_test
