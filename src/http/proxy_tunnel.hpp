// A CONNECT tunnel through an HTTP proxy (RFC 9110 section 9.3.6), for
// https through a proxy: connect to the proxy, send
// "CONNECT host:port HTTP/1.1", read its answer, and on a 2xx run TLS with
// the origin over the same socket. Before the tunnel is up the bytes go
// straight over the socket, so nothing the proxy sends after its answer is
// lost in a stream buffer (a proxy must send nothing before the client's
// TLS hello; if it does, that is an error).
#pragma once

#include <string>
#include <utility>

#include <corio/coro.hpp>
#include <corio/http/headers.hpp>
#include <corio/http/url.hpp>
#include <corio/streams.hpp>

namespace corio::http::detail {

// The CONNECT request for target's authority, with proxy_headers.
std::string connect_request(const Url& target, const Headers& proxy_headers);

// Streams to target through proxy, TLS (tls.ssl) over the tunnel.
// ClientConnectionError when the proxy refuses (its status in the message);
// ParseError for an answer that is not HTTP.
Coro<std::pair<StreamReader, StreamWriter>> open_tunnel(Url proxy, Url target, Headers proxy_headers,
                                                        ConnectOptions tls);

}  // namespace corio::http::detail
