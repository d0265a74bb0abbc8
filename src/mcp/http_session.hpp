// One Streamable HTTP session (see streamable_http.hpp): the Transport its
// mcp::Session reads and writes, and the response streams it feeds.
//
// The session's input is what the POST handlers deliver(); its output is
// routed by the request each message serves: to that request's Outbox (the
// POST's SSE stream or JSON answer), else to the GET stream if one is
// open, else nowhere (the spec lets a server drop what it cannot route).
// Everything here lives on the serving loop: no locks.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <corio/event.hpp>
#include <corio/mcp/transport.hpp>
#include <corio/task.hpp>

namespace corio::mcp::detail {

// The messages for one response stream, in order, until done. Bounded:
// a client that does not read its stream makes the senders wait (the
// transport's send()), as a host that does not read stdout does.
struct Outbox {
  static constexpr std::size_t kMaxQueued = 256;

  std::deque<std::string> messages;
  Event ready;                  // set while there is a message to take, or done
  Event room;                   // set while fewer than kMaxQueued wait, or done
  bool done = false;            // nothing more will come (or nobody reads any more)
  bool keep_last_only = false;  // a JSON answer: only the last message is sent

  Outbox() { room.set(); }
  bool full() const noexcept { return messages.size() >= kMaxQueued; }
  void push(std::string message) {
    if (keep_last_only) messages.clear();
    messages.push_back(std::move(message));
    ready.set();
    if (full()) room.clear();
  }
  std::string take() {
    std::string message = std::move(messages.front());
    messages.pop_front();
    room.set();
    return message;
  }
  void finish() noexcept {
    done = true;
    ready.set();
    room.set();
  }
};

class HttpSessionTransport final : public Transport {
 public:
  Coro<std::optional<Received>> receive() override;
  Coro<void> send(std::string_view message, const json& related_request) override;
  void request_done(const json& id) noexcept override;

  // A POSTed message, for the session to read.
  void deliver(std::string text);
  // The stream for the POSTed request with this id; nullptr while another
  // request with that id is running.
  std::shared_ptr<Outbox> open_request(const json& id);
  // The GET stream; nullptr while one is open.
  std::shared_ptr<Outbox> open_standalone();
  void close_standalone(const std::shared_ptr<Outbox>& box) noexcept;
  // Streams open (requests running, a GET stream): the session is in use.
  bool busy() const noexcept { return !by_request_.empty() || standalone_ != nullptr; }
  // The session's end: receive() reports EOF, every stream ends.
  void close() noexcept;

 private:
  std::deque<std::string> inbox_;
  Event inbox_ready_;
  bool closed_ = false;
  std::map<std::string, std::shared_ptr<Outbox>> by_request_;  // by id.dump()
  std::shared_ptr<Outbox> standalone_;
};

struct HttpSession {
  std::string id;
  HttpSessionTransport transport;
  Task<void> runner;       // mcp::Server::run(transport)
  double last_used = 0.0;  // loop time of the last request
};

}  // namespace corio::mcp::detail
