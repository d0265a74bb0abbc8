// exchange_head (see head_exchange.hpp).
#include <corio/http/client_errors.hpp>
#include <corio/ssl.hpp>

#include "http/client/head_exchange.hpp"

namespace corio::http::detail {

Coro<Streams> connecting(std::string origin, Coro<Streams> opening) {
  try {
    co_return co_await std::move(opening);
  } catch (const SslError& e) {
    throw ClientSSLError("cannot connect to " + origin + ": " + e.what(), e.code());
  } catch (const std::system_error& e) {
    throw ClientConnectionError("cannot connect to " + origin + ": " + e.what(), e.code());
  }
}

Coro<HeadExchange> exchange_head(const Url& url, ConnectOptions copts, std::string request,
                                 Limits limits) {
  Coro<Streams> opening = connecting(url.origin(), open_connection(url.host, url.port, std::move(copts)));
  Streams streams = co_await std::move(opening);
  Coro<HeadExchange> exchange = exchange_head(std::move(streams), std::move(request), limits, url.origin());
  co_return co_await std::move(exchange);
}

Coro<HeadExchange> exchange_head(Streams streams, std::string request,
                                 Limits limits, std::string origin) {
  HeadExchange ex{std::move(streams.first), std::move(streams.second), {}};
  ex.writer.write(request);
  ResponseParser parser(limits);
  for (;;) {
    const std::size_t n = parser.parse(ex.reader.buffered(), ex.head);
    if (n > 0) {
      ex.reader.consume(n);
      co_return ex;
    }
    if (co_await ex.reader.fill_buffer() == 0) {
      throw ClientConnectionError(origin + " disconnected before its answer's head");
    }
  }
}

}  // namespace corio::http::detail
