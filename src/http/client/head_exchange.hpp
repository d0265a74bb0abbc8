// A request head sent on a connection of its own and the answer's head
// read, nothing more: what the handshakes that take a connection over (a
// WebSocket's Upgrade, a proxy's CONNECT) share. The bytes after the
// answer's head stay buffered in the reader, for the protocol that follows.
#pragma once

#include <string>
#include <utility>

#include <corio/coro.hpp>
#include <corio/http/parser.hpp>
#include <corio/http/url.hpp>
#include <corio/streams.hpp>

namespace corio::http::detail {

struct HeadExchange {
  StreamReader reader;
  StreamWriter writer;
  ResponseHead head;
};

using Streams = std::pair<StreamReader, StreamWriter>;

// Awaits opening, a connection to origin being made (directly or through a
// tunnel), and names origin in what it throws: SslError becomes
// ClientSSLError, any other system_error ClientConnectionError, both
// "cannot connect to <origin>: <why>".
Coro<Streams> connecting(std::string origin, Coro<Streams> opening);

// Connects to url's host and port (connecting()'s errors), writes request,
// reads the first response head (ParseError if it is bad,
// ClientConnectionError at EOF before it).
Coro<HeadExchange> exchange_head(const Url& url, ConnectOptions copts, std::string request,
                                 Limits limits);
// The same on a connection already open to origin (through a proxy's
// tunnel, say): origin only names it in the error.
Coro<HeadExchange> exchange_head(Streams streams, std::string request,
                                 Limits limits, std::string origin);

}  // namespace corio::http::detail
