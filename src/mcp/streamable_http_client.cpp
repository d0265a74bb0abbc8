// StreamableHttpClient (see streamable_http_client.hpp): POSTs out, the
// answers (JSON bodies, SSE events on the POSTs' streams and the GET's)
// into one inbox for receive().
#include <corio/mcp/streamable_http_client.hpp>

#include <deque>

#include <fmt/core.h>

#include <corio/errors.hpp>
#include <corio/event.hpp>
#include <corio/shield.hpp>
#include <corio/sleep.hpp>

#include "mcp/sse_events.hpp"

namespace corio::mcp {

namespace {

// The server's text as JSON within the limits (jsonrpc.hpp), null if it is not.
json parsed_or_null(std::string_view text) {
  try {
    return parse_json(text);
  } catch (const RpcError&) {
    return nullptr;
  }
}

// An SSE stream's events are its server's messages; a stream longer than
// this without an event boundary is not one we will buffer.
constexpr std::size_t kMaxEvent = kDefaultMaxMessage;
// SEP-1699 leaves the delay to the client until the server names one.
constexpr std::chrono::milliseconds kDefaultRetry{1000};
// Reconnections that fail in a row (refused, unreachable) before a stream
// is given up: a server that is gone must not be polled for ever.
constexpr int kMaxFailedReconnects = 3;
// Authorizations for one message before its refusal is final (the
// conformance suite's scope-retry-limit asks for at most three).
constexpr int kMaxAuthorizations = 3;

// The id of a request, null for anything else (a request is what gets an
// answer, so only its failures need one made up).
json request_id_of(const json& j) {
  if (!j.is_object() || !j.contains("method") || !j.contains("id")) return nullptr;
  return j["id"];
}

bool answers(const json& j, const json& id) {
  return j.is_object() && !j.contains("method") && j.value("id", json()) == id;
}

// What a refused POST means for the request it carried: the server's
// JSON-RPC error when its body has one (404's "Session not found"), else
// the HTTP status.
json refusal_answer(const json& id, int status, std::string_view body) {
  const json j = parsed_or_null(body);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    return make_error(id, e.value("code", error_code::internal_error),
                      e.value("message", std::string("refused")));
  }
  return make_error(id, error_code::internal_error, fmt::format("HTTP {}: {}", status, body));
}

bool is_event_stream(const http::ClientResponse& r) {
  return r.ok() && r.content_type() == "text/event-stream";
}

}  // namespace

struct StreamableHttpClient::Link {
  Link(std::string u, http::ClientOptions options) : http(std::move(options)), url(std::move(u)) {}

  http::ClientSession http;
  std::string url;
  std::string session_id;
  std::string protocol_version;  // from initialize's answer, for the header
  std::deque<std::string> messages;
  std::size_t unread = 0;  // bytes in messages
  std::size_t max_unread = kDefaultMaxUnreadBytes;
  Event ready;
  Event room;  // set while unread is within max_unread
  bool closed = false;
  OAuth* auth = nullptr;

  void deliver(std::string message) {
    learn_revision(message);
    unread += message.size();
    if (unread > max_unread) room.clear();
    messages.push_back(std::move(message));
    ready.set();
  }
  std::string take() {
    std::string message = std::move(messages.front());
    messages.pop_front();
    unread -= message.size();
    if (unread <= max_unread) room.set();
    return message;
  }
  // The streams' readers wait here before they read on: a receiver that
  // falls behind leaves the server's messages in the sockets and the
  // server's stores (which push back on its senders), not here.
  Coro<void> until_room() {
    while (unread > max_unread && !closed) {
      room.clear();
      co_await room.wait();
    }
  }
  void close() {
    closed = true;
    ready.set();
    room.set();
  }
  // Later requests must say the negotiated revision (MCP-Protocol-Version);
  // the transport sees it go by in initialize's answer.
  void learn_revision(std::string_view message) {
    if (!protocol_version.empty() || message.find("\"protocolVersion\"") == std::string_view::npos) return;
    const json j = parsed_or_null(message);
    if (j.is_object() && j.contains("result") && j["result"].is_object() &&
        j["result"].contains("serverInfo")) {
      protocol_version = j["result"].value("protocolVersion", std::string());
    }
  }
  // The session's headers; accept: what the request can take back.
  http::RequestOptions options(std::string_view accept) const {
    http::RequestOptions opts;
    opts.headers.set("Accept", std::string(accept));
    if (!session_id.empty()) opts.headers.set("Mcp-Session-Id", session_id);
    if (!protocol_version.empty()) opts.headers.set("MCP-Protocol-Version", protocol_version);
    if (auth) {
      if (std::string bearer = auth->authorization(url); !bearer.empty()) opts.headers.set("Authorization", bearer);
    }
    return opts;
  }
  // A GET for the standalone stream or the resumption of one (with its
  // last event id); nullopt if the server offers no stream (405) or
  // answers with something else. A stream lives as long as the session:
  // no total timeout.
  Coro<std::optional<http::ClientResponse>> open_stream(std::string last_event_id) {
    http::RequestOptions opts = options("text/event-stream");
    if (!last_event_id.empty()) opts.headers.set("Last-Event-ID", last_event_id);
    http::ClientTimeout timeout = http.client_options().timeout;
    timeout.total.reset();
    opts.timeout = timeout;
    http::ClientResponse r = co_await http.get(url, std::move(opts));
    if (is_event_stream(r)) co_return r;
    r.release();
    co_return std::nullopt;
  }
};

// One stream, event by event, resumed while its work is not done: a
// POST's until its answer came (id), the GET's (id null) until the
// session ends. A POST's stream given up gets an error answer made up, so
// the caller does not wait for ever. It holds the link and its response
// itself: a reader cancelled by close() or the destructor may unwind
// after the transport is gone.
Coro<void> StreamableHttpClient::follow(std::shared_ptr<Link> link, http::ClientResponse response,
                                        json id) {
  detail::SseEvents sse;
  std::optional<http::ClientResponse> r(std::move(response));
  const bool post = !id.is_null();
  bool answered = false;
  std::string why = "the server's stream ended without an answer";
  for (int failed = 0; failed < kMaxFailedReconnects;) {
    try {
      // No co_await inside `r && ...`: g++ 12 evaluates it even when r is
      // empty (a stream given up then read "the response was released").
      while (r) {
        const std::string piece = co_await r->read_chunk();
        if (piece.empty()) break;
        for (std::string& data : sse.feed(piece)) {
          answered |= post && answers(parsed_or_null(data), id);
          link->deliver(std::move(data));
        }
        if (sse.pending() > kMaxEvent) throw ValueError("an SSE event over the message size limit");
        co_await link->until_room();
      }
      if (link->closed || answered) co_return;
      // Without an event id the server keeps nothing to replay.
      if (post && sse.last_event_id().empty()) break;
      r.reset();
      co_await sleep(sse.retry().value_or(kDefaultRetry));
      if (link->closed) co_return;
      r = co_await link->open_stream(sse.last_event_id());
      if (!r) break;  // no stream to resume on (405, or refused)
      sse.reconnected();
      failed = 0;
    } catch (const CancelledError&) {
      co_return;  // close(): nobody waits for an answer any more
    } catch (const std::exception& e) {
      why = e.what();
      r.reset();
      ++failed;
    }
  }
  if (post && !link->closed) link->deliver(make_error(id, error_code::internal_error, why).dump());
}

// The standalone stream, opened once initialize is done; before the next
// request goes out, since a server may send its requests only there and
// drops them when no GET is open (the TypeScript SDK's server does).
Coro<void> StreamableHttpClient::listen() {
  std::optional<http::ClientResponse> r;
  try {
    r = co_await link_->open_stream("");
  } catch (const CancelledError&) {
    throw;
  } catch (const std::exception&) {
    // No stream: the POSTs' answers still come.
  }
  if (r) readers_.push_back(create_task(follow(link_, std::move(*r), nullptr)));
}

StreamableHttpClient::StreamableHttpClient(std::string url, http::ClientOptions options)
    : link_(std::make_shared<Link>(std::move(url), std::move(options))) {}

StreamableHttpClient::~StreamableHttpClient() {
  link_->closed = true;
  for (Task<void>& reader : readers_) reader.cancel();
}

const std::string& StreamableHttpClient::session_id() const noexcept { return link_->session_id; }

void StreamableHttpClient::set_authorization(OAuth* auth) noexcept { link_->auth = auth; }

void StreamableHttpClient::max_unread_bytes(std::size_t n) noexcept {
  link_->max_unread = n;
  if (link_->unread <= n) link_->room.set();
}

Coro<http::ClientResponse> StreamableHttpClient::post(std::string_view message) {
  for (int authorized = 0;; ++authorized) {
    http::RequestOptions opts = link_->options("application/json, text/event-stream");
    opts.headers.set("Content-Type", "application/json");
    opts.data = std::string(message);
    http::ClientResponse r = co_await link_->http.post(link_->url, std::move(opts));
    const bool refused = r.status() == 401 || r.status() == 403;
    if (!refused || !link_->auth || authorized == kMaxAuthorizations) co_return r;
    // r stays unread meanwhile: if the flow cannot help, it is the answer.
    const std::string challenge(r.headers().get_or("WWW-Authenticate", ""));
    const bool cured = co_await link_->auth->on_refused(link_->http, link_->url, r.status(), challenge);
    if (!cured) co_return r;
    r.release();
  }
}

Coro<void> StreamableHttpClient::send(std::string_view message, const json& /*related_request*/) {
  if (link_->closed) throw RpcError(error_code::internal_error, "the transport is closed");
  const json parsed = parsed_or_null(message);
  json id = request_id_of(parsed);
  std::optional<http::ClientResponse> posted;
  try {
    posted = co_await post(message);
  } catch (const RpcError& e) {
    // The authorization failed: the request's answer says why.
    if (!id.is_null()) link_->deliver(make_error(id, e).dump());
  }
  if (!posted) co_return;
  http::ClientResponse r = std::move(*posted);
  if (const auto sid = r.headers().get("Mcp-Session-Id")) link_->session_id = std::string(*sid);
  std::erase_if(readers_, [](const Task<void>& t) { return t.done(); });
  if (is_event_stream(r)) {
    readers_.push_back(create_task(follow(link_, std::move(r), std::move(id))));
    co_return;
  }
  std::string body = co_await r.read();
  if (!r.ok()) {
    if (!id.is_null()) link_->deliver(refusal_answer(id, r.status(), body).dump());
  } else if (!body.empty()) {
    link_->deliver(std::move(body));  // application/json: the answer itself
  }
  if (r.ok() && parsed.value("method", "") == "notifications/initialized") co_await listen();
}

Coro<std::optional<Received>> StreamableHttpClient::receive() {
  while (link_->messages.empty() && !link_->closed) {
    link_->ready.clear();
    co_await link_->ready.wait();
  }
  if (link_->messages.empty()) co_return std::nullopt;
  co_return Received{link_->take(), false};
}

Coro<void> StreamableHttpClient::close() {
  if (link_->closed) co_return;
  link_->close();
  for (Task<void>& reader : readers_) reader.cancel();
  readers_.clear();
  // The DELETE and the pool's close run shielded, in a task of their own: a
  // close() cancelled while it waits still ends the server's session and
  // closes the connections (the cancellation sweep found both left open, and
  // a second close() is a no-op).
  auto end_session = [](std::shared_ptr<Link> link) -> Coro<void> {
    if (!link->session_id.empty()) {
      http::RequestOptions opts;
      opts.headers.set("Mcp-Session-Id", link->session_id);
      try {
        http::ClientResponse bye = co_await link->http.del(link->url, std::move(opts));
        bye.release();
      } catch (const std::exception&) {
        // The server is gone already: its session with it.
      }
    }
    co_await link->http.close();
  };
  co_await shield(end_session(link_));
}

}  // namespace corio::mcp
