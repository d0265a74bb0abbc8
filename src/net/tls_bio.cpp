// The cipher BIO (see tls_bio.hpp): a BIO_METHOD made once per process.
#include "net/tls_bio.hpp"

#include <algorithm>
#include <cstring>
#include <new>

namespace corio::detail {

namespace {

CipherBuffers& buffers_of(BIO* bio) { return *static_cast<CipherBuffers*>(BIO_get_data(bio)); }

// C calls it: an allocation failure is a failed write, not an exception.
int write_ex(BIO* bio, const char* data, std::size_t len, std::size_t* written) {
  BIO_clear_retry_flags(bio);
  *written = 0;
  try {
    buffers_of(bio).out.append({data, len});
  } catch (const std::bad_alloc&) {
    return 0;
  }
  *written = len;
  return 1;
}

// 0 with no retry flag at the end of the stream: OpenSSL then asks
// BIO_eof() and reports an unexpected EOF unless close_notify came first.
int read_ex(BIO* bio, char* data, std::size_t len, std::size_t* read) {
  BIO_clear_retry_flags(bio);
  CipherBuffers& b = buffers_of(bio);
  *read = 0;
  if (b.in.empty()) {
    if (!b.in_eof) BIO_set_retry_read(bio);
    return 0;
  }
  const std::size_t n = std::min(len, b.in.size());
  std::memcpy(data, b.in.view().data(), n);
  b.in.consume(n);  // gives the block back once drained
  *read = n;
  return 1;
}

long ctrl(BIO* bio, int cmd, long /*num*/, void* /*ptr*/) {
  CipherBuffers& b = buffers_of(bio);
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      return 1;
    case BIO_CTRL_EOF:
      return b.in.empty() && b.in_eof ? 1 : 0;
    case BIO_CTRL_PENDING:
      return static_cast<long>(b.in.size());
    case BIO_CTRL_WPENDING:
      return static_cast<long>(b.out.size());
    default:
      return 0;  // KTLS, datagram and the rest: not ours
  }
}

BIO_METHOD* make_method() {
  BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "corio cipher");
  if (m == nullptr || BIO_meth_set_write_ex(m, write_ex) != 1 ||
      BIO_meth_set_read_ex(m, read_ex) != 1 || BIO_meth_set_ctrl(m, ctrl) != 1) {
    BIO_meth_free(m);
    return nullptr;
  }
  return m;
}

}  // namespace

BIO* new_cipher_bio(CipherBuffers& buffers) {
  static BIO_METHOD* const method = make_method();  // for the process's life
  if (method == nullptr) return nullptr;
  BIO* bio = BIO_new(method);
  if (bio == nullptr) return nullptr;
  BIO_set_data(bio, &buffers);
  BIO_set_init(bio, 1);
  return bio;
}

}  // namespace corio::detail
