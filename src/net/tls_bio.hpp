// The BIO OpenSSL reads ciphertext from and writes it to in TlsTransport:
// two ByteBuffers instead of memory BIOs.
//
// A memory BIO keeps the capacity of the largest thing it ever held (a
// handshake flight, a 16 KiB read), so an idle connection would keep two
// such buffers; a ByteBuffer holds no storage while empty, and its blocks
// come from the thread's pool. Writing also saves a copy: OpenSSL's records
// land in `out`, which is what goes to the socket.
#pragma once

#include <openssl/bio.h>

#include "net/byte_buffer.hpp"

namespace corio::detail {

struct CipherBuffers {
  ByteBuffer in;        // received, not yet read by OpenSSL
  ByteBuffer out;       // written by OpenSSL, not yet taken by the socket
  bool in_eof = false;  // the peer ended the stream: OpenSSL reads EOF once `in` is empty
};

// A BIO over `buffers` (which must outlive it): reads take from `in` (asking
// OpenSSL to retry while it is empty and not at EOF), writes append to `out`.
// nullptr if OpenSSL cannot allocate it.
BIO* new_cipher_bio(CipherBuffers& buffers);

}  // namespace corio::detail
