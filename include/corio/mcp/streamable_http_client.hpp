/// \file
/// The client side of MCP's Streamable HTTP transport (the Python SDK's
/// streamablehttp_client): an mcp::Client over a server's URL.
///
/// <!-- doc: body -->
///     corio::mcp::StreamableHttpClient transport("http://127.0.0.1:8000/mcp");
///     corio::mcp::Client client(transport);
///     co_await client.initialize();
///     nlohmann::json args = {{"target_date", "today"}};  // named: g++ 12 rejects {...} in co_await
///     nlohmann::json r = co_await client.call_tool("get_nba_news", args);
///     co_await client.close();
///     co_await transport.close();             // DELETE: the server ends the session
///
/// Each message is a POST. The server's answers come back as the POST's
/// body (JSON, or an SSE stream read by a task of this transport while the
/// next messages go out) and are handed to receive() in arrival order. The
/// session id from initialize's answer, and the negotiated revision, go on
/// every later request. A POST the server refuses (404 for a session it
/// ended, 4xx/5xx) becomes the JSON-RPC error answer of the request it
/// carried, so the caller's request() raises RpcError instead of waiting.
///
/// Once notifications/initialized is out (before send() returns), a GET
/// opens the standalone SSE stream, for the server's messages that belong
/// to no POST (its requests to the client, notifications); a server
/// without one answers 405 and
/// that is all. A stream that ends before its work is done (a POST's
/// before its answer, the GET's at any time) is resumed as SEP-1699 says:
/// after the server's retry delay (exactly; 1 s until it names one), a GET
/// with Last-Event-ID; a POST's stream continues on that GET. A POST's
/// stream without an event id cannot be resumed: its request gets an error
/// answer. Three failed reconnections in a row end a stream.
///
/// Events without data (the priming event "id: ev-1\nretry: 500\ndata: \n\n")
/// are not messages: they only set the id and the delay. An event longer
/// than kDefaultMaxMessage (data lines without the empty line that ends an
/// event, say) fails its stream.
///
/// Bounded: the messages not yet taken by receive() hold at most
/// max_unread_bytes (plus one read's worth); past it the streams are not
/// read until receive() catches up, so a server that sends faster than the
/// client takes is pushed back through the sockets (its own stores then
/// hold its senders back) instead of filling this process.
///
/// Suspends: send() until the server has answered the POST's head;
/// receive() until a message arrives; close() for the DELETE. Resumed by:
/// the loop (the HTTP connections, the reconnection timers).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <corio/http/client.hpp>
#include <corio/mcp/auth.hpp>
#include <corio/mcp/transport.hpp>
#include <corio/task.hpp>

namespace corio::mcp {

/// StreamableHttpClient's default bound on the messages waiting for
/// receive(), in bytes (as redis::ClientOptions::max_unread_bytes).
inline constexpr std::size_t kDefaultMaxUnreadBytes = std::size_t{1} << 20;

/// Streamable HTTP's client side: each message POSTed, the answers read
/// as JSON or SSE, the GET stream opened after initialize, broken streams
/// resumed with Last-Event-ID.
class StreamableHttpClient final : public Transport {
 public:
  /// url: the MCP endpoint (http://host:port/mcp); options: the HTTP
  /// client's.
  explicit StreamableHttpClient(std::string url, http::ClientOptions options = {});
  StreamableHttpClient(const StreamableHttpClient&) = delete;
  StreamableHttpClient& operator=(const StreamableHttpClient&) = delete;
  ~StreamableHttpClient() override;  ///< stops its readers (close() first to end the session)

  Coro<std::optional<Received>> receive() override;
  Coro<void> send(std::string_view message, const json& related_request) override;

  /// Requests carry auth's bearer token; a refusal it can cure (a 401, a
  /// 403 insufficient_scope) runs its flow and the request is repeated, at
  /// most three times (a server that keeps refusing is not asked for
  /// ever). auth must outlive the transport. See auth.hpp.
  void set_authorization(OAuth* auth) noexcept;

  /// The most bytes of messages waiting for receive() before the streams
  /// stop being read (default kDefaultMaxUnreadBytes).
  void max_unread_bytes(std::size_t n) noexcept;

  /// The server's session id ("" before initialize's answer).
  const std::string& session_id() const noexcept;
  /// Ends the session (DELETE, when there is one), stops reading the open
  /// streams; receive() then reports EOF. Idempotent; a cancelled close() ends it all the same.
  Coro<void> close();

 private:
  // What the transport shares with the tasks that read its streams: they
  // may still be unwinding after it is gone, and reconnect on their own.
  struct Link;
  static Coro<void> follow(std::shared_ptr<Link> link, http::ClientResponse response, json id);
  Coro<void> listen();
  // The POST of message, repeated after the authorization it needed.
  Coro<http::ClientResponse> post(std::string_view message);

  std::shared_ptr<Link> link_;
  std::vector<Task<void>> readers_;  // one per stream still open (or being resumed)
};

}  // namespace corio::mcp
