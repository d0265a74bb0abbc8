// The nghttp2 side of an H2Connection: its server session, whose callbacks
// (thin: each finds the stream and calls it) feed the connection and its
// streams, and the data provider's read callback.
#pragma once

#include <nghttp2/nghttp2.h>

#include <corio/http/server.hpp>

namespace corio::http::detail {

class H2Connection;

// A server session for conn, its SETTINGS submitted: the options' stream
// cap, window and header-list size. std::bad_alloc if nghttp2 has no memory.
nghttp2_session* new_server_session(H2Connection& conn, const ServerOptions& options);

// The data provider of a stream's answer (source.ptr: the H2Stream).
nghttp2_data_provider body_provider(void* stream) noexcept;

}  // namespace corio::http::detail
