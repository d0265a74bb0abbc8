// Connection's reference count and the reader/writer pair over a transport.
#include "net/connection.hpp"

namespace corio::detail {

void add_ref(Connection* c) noexcept { ++c->refs; }

void release(Connection* c) noexcept {
  if (--c->refs == 0) delete c;  // ~Transport closes the socket
}

std::pair<StreamReader, StreamWriter> make_streams(std::unique_ptr<Transport> transport,
                                                   std::size_t limit) {
  if (limit == 0) throw ValueError("stream limit must be positive");
  Ref<Connection> c(new Connection(get_running_loop(), std::move(transport), limit));
  return {StreamReader(c), StreamWriter(c)};
}

}  // namespace corio::detail
