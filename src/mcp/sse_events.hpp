// The client's reading of a text/event-stream (the WHATWG "event stream
// interpretation", as MCP's Streamable HTTP uses it): the data of each
// event, and the two fields a reconnection needs, the last event id and
// the retry delay.
//
// An event whose data is empty is not an event to dispatch (the spec's
// rule): the priming event MCP servers send first,
// "id: ev-1\nretry: 500\ndata: \n\n", only sets the id and the delay.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace corio::mcp::detail {

class SseEvents {
 public:
  // Appends a piece of the stream; returns the data of the events it
  // completed (several data lines joined by "\n"). Comments, "event:" and
  // unknown fields are ignored; CR, LF and CRLF all end a line.
  std::vector<std::string> feed(std::string_view piece);
  // A new connection resumes the stream: what was half-read of the old
  // one is dropped (the server replays whole events); the last event id
  // and the retry delay stay.
  void reconnected() noexcept {
    buf_.clear();
    data_.clear();
    has_data_ = false;
  }
  // Bytes held for an event not yet complete: its unfinished line and the
  // data lines it has so far (a stream of data lines with no empty line
  // between them is one endless event).
  std::size_t pending() const noexcept { return buf_.size() + data_.size(); }
  // The id of the last event seen ("" before any), for Last-Event-ID.
  const std::string& last_event_id() const noexcept { return last_id_; }
  // The server's retry field, if it sent one.
  std::optional<std::chrono::milliseconds> retry() const noexcept { return retry_; }

 private:
  void field(std::string_view line);

  std::string buf_;
  std::string data_;
  bool has_data_ = false;
  std::string last_id_;
  std::optional<std::chrono::milliseconds> retry_;
};

// The server's half: events as Streamable HTTP writes them, each with the
// id "<stream>-<n>" a client resumes from (Last-Event-ID).
void append_sse_event(std::string& out, std::uint64_t stream, std::uint64_t n, std::string_view message);
// The event a new stream opens with (SEP-1699): an id to resume from before
// any message came (n = 0), and how long a client waits to reconnect.
std::string sse_priming_event(std::uint64_t stream, std::chrono::milliseconds retry);

}  // namespace corio::mcp::detail
