// The client side of MCP's Streamable HTTP transport (the Python SDK's
// streamablehttp_client): an mcp::Client over a server's URL.
//
//   corio::mcp::StreamableHttpClient transport("http://127.0.0.1:8000/mcp");
//   corio::mcp::Client client(transport);
//   co_await client.initialize();
//   json r = co_await client.call_tool("get_nba_news", {{"target_date", "today"}});
//   co_await client.close();
//   co_await transport.close();             // DELETE: the server ends the session
//
// Each message is a POST. The server's answers come back as the POST's
// body (JSON, or an SSE stream read by a task of this transport while the
// next messages go out) and are handed to receive() in arrival order. The
// session id from initialize's answer, and the negotiated revision, go on
// every later request. A POST the server refuses (404 for a session it
// ended, 4xx/5xx) becomes the JSON-RPC error answer of the request it
// carried, so the caller's request() raises RpcError instead of waiting.
//
// Suspends: send() until the server has answered the POST's head;
// receive() until a message arrives; close() for the DELETE. Resumed by:
// the loop (the HTTP connections).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <corio/http/client.hpp>
#include <corio/mcp/transport.hpp>
#include <corio/task.hpp>

namespace corio::mcp {

class StreamableHttpClient final : public Transport {
 public:
  explicit StreamableHttpClient(std::string url, http::ClientOptions options = {});
  StreamableHttpClient(const StreamableHttpClient&) = delete;
  StreamableHttpClient& operator=(const StreamableHttpClient&) = delete;
  ~StreamableHttpClient() override;  // stops its readers (close() first to end the session)

  Coro<std::optional<Received>> receive() override;
  Coro<void> send(std::string_view message, const json& related_request) override;

  // The server's session id ("" before initialize's answer).
  const std::string& session_id() const noexcept { return session_id_; }
  // Ends the session (DELETE, when there is one), stops reading the open
  // streams; receive() then reports EOF. Idempotent.
  Coro<void> close();

 private:
  // What the readers of SSE answers share with the transport: they may
  // still be unwinding after it is gone.
  struct Inbox;
  static Coro<void> read_events(std::shared_ptr<Inbox> inbox, http::ClientResponse response,
                                json id);
  http::RequestOptions options_for(std::string body) const;

  std::string url_;
  http::ClientSession http_;
  std::string session_id_;
  std::shared_ptr<Inbox> inbox_;
  std::vector<Task<void>> readers_;  // one per SSE answer still streaming
};

}  // namespace corio::mcp
