// StreamableHttpClient (see streamable_http_client.hpp): POSTs out, the
// answers (JSON bodies, SSE events) into one inbox for receive().
#include <corio/mcp/streamable_http_client.hpp>

#include <deque>

#include <fmt/core.h>

#include <corio/errors.hpp>
#include <corio/event.hpp>

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

// The id of a request, null for anything else (a request is what gets an
// answer, so only its failures need one made up).
json request_id_of(std::string_view message) {
  const json j = parsed_or_null(message);
  if (!j.is_object() || !j.contains("method") || !j.contains("id")) return nullptr;
  return j["id"];
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

}  // namespace

struct StreamableHttpClient::Inbox {
  std::deque<std::string> messages;
  Event ready;
  bool closed = false;
  std::string protocol_version;  // from initialize's answer, for the header

  void deliver(std::string message) {
    learn_revision(message);
    messages.push_back(std::move(message));
    ready.set();
  }
  void close() {
    closed = true;
    ready.set();
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
};

namespace {

// The data of each complete event in buf (taken out of it); CRs dropped,
// several data lines joined by "\n", comments and other fields ignored.
std::vector<std::string> take_events(std::string& buf) {
  std::vector<std::string> out;
  std::erase(buf, '\r');
  for (std::size_t end; (end = buf.find("\n\n")) != std::string::npos;) {
    std::string data;
    bool has_data = false;
    for (std::size_t at = 0; at < end;) {
      const std::size_t nl = std::min(buf.find('\n', at), end);
      const std::string_view line(buf.data() + at, nl - at);
      if (line.starts_with("data:")) {
        std::string_view v = line.substr(5);
        if (v.starts_with(' ')) v.remove_prefix(1);
        if (has_data) data += '\n';
        data += v;
        has_data = true;
      }
      at = nl + 1;
    }
    if (has_data) out.push_back(std::move(data));
    buf.erase(0, end + 2);
  }
  return out;
}

}  // namespace

// One POST's SSE answer, event by event, until the stream ends. A stream
// that ends (or breaks) before the request's answer came gets an error
// answer made up, so the caller does not wait for ever. It holds the inbox
// and its response itself: a reader cancelled by close() or the destructor
// may unwind after the transport is gone.
Coro<void> StreamableHttpClient::read_events(std::shared_ptr<Inbox> inbox,
                                             http::ClientResponse response, json id) {
  bool answered = false;
  std::string buf, why = "the server's stream ended without an answer";
  try {
    for (std::string piece; !(piece = co_await response.read_chunk()).empty();) {
      buf += piece;
      for (std::string& data : take_events(buf)) {
        const json j = parsed_or_null(data);
        answered |= j.is_object() && !j.contains("method") && j.value("id", json()) == id;
        inbox->deliver(std::move(data));
      }
      if (buf.size() > kMaxEvent) throw ValueError("an SSE event over the message size limit");
    }
  } catch (const CancelledError&) {
    co_return;  // close(): nobody waits for an answer any more
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!answered && !id.is_null() && !inbox->closed) {
    inbox->deliver(make_error(id, error_code::internal_error, why).dump());
  }
}

StreamableHttpClient::StreamableHttpClient(std::string url, http::ClientOptions options)
    : url_(std::move(url)), http_(std::move(options)), inbox_(std::make_shared<Inbox>()) {}

StreamableHttpClient::~StreamableHttpClient() {
  inbox_->closed = true;
  for (Task<void>& reader : readers_) reader.cancel();
}

http::RequestOptions StreamableHttpClient::options_for(std::string body) const {
  http::RequestOptions opts;
  opts.headers.set("Content-Type", "application/json");
  opts.headers.set("Accept", "application/json, text/event-stream");
  if (!session_id_.empty()) opts.headers.set("Mcp-Session-Id", session_id_);
  if (!inbox_->protocol_version.empty()) {
    opts.headers.set("MCP-Protocol-Version", inbox_->protocol_version);
  }
  opts.data = std::move(body);
  return opts;
}

Coro<void> StreamableHttpClient::send(std::string_view message, const json& /*related_request*/) {
  if (inbox_->closed) throw RpcError(error_code::internal_error, "the transport is closed");
  json id = request_id_of(message);
  http::ClientResponse r = co_await http_.post(url_, options_for(std::string(message)));
  if (const auto sid = r.headers().get("Mcp-Session-Id")) session_id_ = std::string(*sid);
  std::erase_if(readers_, [](const Task<void>& t) { return t.done(); });
  if (r.ok() && r.content_type() == "text/event-stream") {
    readers_.push_back(create_task(read_events(inbox_, std::move(r), std::move(id))));
    co_return;
  }
  std::string body = co_await r.read();
  if (!r.ok()) {
    if (!id.is_null()) inbox_->deliver(refusal_answer(id, r.status(), body).dump());
  } else if (!body.empty()) {
    inbox_->deliver(std::move(body));  // application/json: the answer itself
  }
}

Coro<std::optional<Received>> StreamableHttpClient::receive() {
  while (inbox_->messages.empty() && !inbox_->closed) {
    inbox_->ready.clear();
    co_await inbox_->ready.wait();
  }
  if (inbox_->messages.empty()) co_return std::nullopt;
  Received r{std::move(inbox_->messages.front()), false};
  inbox_->messages.pop_front();
  co_return r;
}

Coro<void> StreamableHttpClient::close() {
  if (inbox_->closed) co_return;
  inbox_->close();
  for (Task<void>& reader : readers_) reader.cancel();
  readers_.clear();
  if (!session_id_.empty()) {
    http::RequestOptions opts;
    opts.headers.set("Mcp-Session-Id", session_id_);
    try {
      http::ClientResponse bye = co_await http_.del(url_, std::move(opts));
      bye.release();
    } catch (const std::exception&) {
      // The server is gone already: its session with it.
    }
  }
  co_await http_.close();
}

}  // namespace corio::mcp
