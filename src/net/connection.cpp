// Connection's reference count and the reader/writer pair over a transport.
#include "net/connection.hpp"

namespace corio::detail {

void add_ref(Connection* c) noexcept { ++c->refs; }

void release(Connection* c) noexcept {
  if (--c->refs != 0) return;
  // Dropped without close(): close as close() would, so a TLS peer still
  // gets its close_notify (asyncio's StreamWriter.__del__ closes too). A
  // goodbye task holds a reference of its own; a stopped loop (closing)
  // runs no tasks, so there ~Transport just closes the socket.
  if (!c->closing && c->loop.is_running()) {
    c->refs = 1;
    c->closing = true;
    c->finish_close();
    if (--c->refs != 0) return;
  }
  delete c;
}

std::pair<StreamReader, StreamWriter> make_streams(std::unique_ptr<Transport> transport,
                                                   std::size_t limit) {
  if (limit == 0) throw ValueError("stream limit must be positive");
  Ref<Connection> c(new Connection(get_running_loop(), std::move(transport), limit));
  return {StreamReader(c), StreamWriter(c)};
}

}  // namespace corio::detail
