// StreamTransport (see stream_transport.hpp).
#include <algorithm>
#include <cstring>

#include "net/stream_transport.hpp"

namespace corio::detail {

std::optional<std::size_t> StreamTransport::try_read(std::span<char> buf) {
  if (r_.buffered().empty()) {
    const std::optional<std::size_t> got = r_.try_fill();
    if (!got || *got == 0) return got;  // nothing yet, or EOF
  }
  const std::string_view have = r_.buffered();
  const std::size_t n = std::min(buf.size(), have.size());
  std::memcpy(buf.data(), have.data(), n);
  r_.consume(n);
  return n;
}

std::size_t StreamTransport::try_write(std::string_view data) {
  // Above the high-water mark (or failed: then drain() says why), nothing.
  if (w_.is_closing() || w_.get_write_buffer_size() > w_.get_write_buffer_limits().second) return 0;
  w_.write(data);
  return data.size();
}

}  // namespace corio::detail
