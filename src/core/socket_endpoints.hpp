// The addresses of a socket a task waits on, for call graphs
// (call_graph.hpp): asked of the fd with getpeername/getsockname when a graph
// is captured, so the await path itself pays nothing for them.
#pragma once

#include <corio/call_graph.hpp>

namespace corio::detail {

// Fills a's peer, local, listening and peer_pid from fd. A descriptor that is
// not a socket (a pipe stream waits the same way) or is gone leaves them empty.
void describe_socket_endpoints(int fd, AwaitedObject& a);

}  // namespace corio::detail
