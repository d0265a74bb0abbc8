// One Streamable HTTP session (see streamable_http.hpp): the Transport its
// mcp::Session reads and writes, and the response streams it feeds.
//
// The session's input is what the POST handlers hand it, each in its own
// task; its output is routed by the request each message serves: to that request's Outbox (the
// POST's SSE stream or JSON answer), else to the GET stream if one was
// opened, else nowhere (the spec lets a server drop what it cannot route).
// Everything here lives on the serving loop: no locks.
//
// Resumability (SEP-1699): every stream has an id and numbers its events,
// so an SSE event's id is "<stream>-<n>". The Outbox is the stream's event
// store: a client that lost the connection (or whose stream the server
// closed mid-call, Context::close_sse_stream) GETs with Last-Event-ID and
// a new writer takes over from the next event. The store is bounded, in
// events and in bytes: the events not yet written wait (their senders wait
// while a writer is there to drain them; without one the oldest are
// dropped, never the newest), and the last few written are kept for a
// client that missed them.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <corio/event.hpp>
#include <corio/mcp/server.hpp>
#include <corio/mcp/transport.hpp>
#include <corio/task.hpp>

namespace corio::mcp::detail {

struct Outbox {
  static constexpr std::size_t kMaxQueued = 256;  // events not yet written
  static constexpr std::size_t kMaxQueuedBytes = 1 << 20;  // their bytes (beyond: one event)
  static constexpr std::size_t kKeptWritten = 32;  // written, kept for a resumption
  static constexpr std::size_t kKeptWrittenBytes = 1 << 20;  // their bytes (beyond: the last one)

  std::uint64_t stream_id = 0;
  std::deque<std::string> events;  // the events numbered [first, next)
  std::uint64_t first = 1;
  std::uint64_t next = 1;
  std::uint64_t cursor = 1;     // the next event to write
  std::size_t stored_bytes = 0;     // of events
  std::size_t unwritten_bytes = 0;  // of the events from cursor on
  std::uint64_t writer = 0;     // the writer in charge; another number makes the old one stop
  std::uint64_t writer_end = UINT64_MAX;  // close_writer(): the writer stops before this event
  bool attached = false;        // a writer is in charge
  Event ready;                  // set while there is an event to write, or done, or the writer changed
  Event room;                   // set while the senders may go on
  bool done = false;            // nothing more will come
  bool keep_last_only = false;  // a JSON answer: only the last message is sent
  bool answered = false;        // the request's answer is the last event
  bool answering = false;       // the POST is choosing JSON or SSE, until a writer attaches
  std::string priming;          // the priming event its first writer opens with, if any

  Outbox() { room.set(); }
  std::size_t unwritten() const noexcept { return static_cast<std::size_t>(next - cursor); }
  // While the POST chooses (answering), senders wait as if a writer were
  // there: one that never suspends would otherwise drop its own oldest.
  bool draining() const noexcept { return attached || answering; }
  bool full() const noexcept {
    return draining() && (unwritten() >= kMaxQueued || unwritten_bytes >= kMaxQueuedBytes);
  }
  void push(std::string message);
  // The next event to write, and its number. The view is valid until the
  // next push() or take().
  std::pair<std::uint64_t, std::string_view> take();
  void finish() noexcept;
  // A new writer takes over from event from (or the oldest still kept);
  // the one before stops. Its number, for detach(). A resumption is not
  // bound by an earlier close_writer().
  std::uint64_t attach(std::uint64_t from, bool resumption) noexcept;
  void detach(std::uint64_t w) noexcept;
  // Whether writer w should write the next event.
  bool writes(std::uint64_t w) const noexcept { return w == writer && unwritten() > 0 && cursor < writer_end; }
  // Whether writer w is through: another took over, or nothing more is
  // for it to write.
  bool through(std::uint64_t w) const noexcept {
    return w != writer || cursor >= writer_end || (done && unwritten() == 0);
  }
  // The writer writes what came so far and stops (its response ends); what
  // comes later waits for a resumption.
  void close_writer() noexcept;
  // The POST chose (JSON), or gave up: no writer will come from it.
  void stop_answering() noexcept {
    answering = false;
    room.set();
  }

 private:
  void drop_front() noexcept;
};

// The session's output, routed to its response streams. Its input is no
// queue: each POST hands its message to the session (Server::Connection),
// so an idle session holds no task, and a POSTed request over the
// session's max_in_flight waits in its own POST.
class HttpSessionTransport final : public Transport {
 public:
  // Never called: the session is fed by its POSTs.
  Coro<std::optional<Received>> receive() override { co_return std::nullopt; }
  Coro<void> send(std::string_view message, const json& related_request) override;
  void request_done(const json& id) noexcept override;
  void request_answered(const json& id) noexcept override;
  void close_stream(const json& id) noexcept override;

  // The stream for the POSTed request with this id; nullptr while another
  // request with that id is running.
  std::shared_ptr<Outbox> open_request(const json& id);
  // The GET stream (new, or the one before if none is writing, from its
  // next event); nullptr while one is being written.
  std::shared_ptr<Outbox> open_standalone();
  // The stream an SSE event id ("<stream>-<n>") names, and the number of
  // the event after it; nullopt for an id of no stream kept.
  std::optional<std::pair<std::shared_ptr<Outbox>, std::uint64_t>> resume(std::string_view last_event_id);
  // Streams being written or requests running: the session is in use.
  bool busy() const noexcept;
  // The session's end: every stream ends.
  void close() noexcept;

 private:
  std::shared_ptr<Outbox> new_outbox();
  std::shared_ptr<Outbox> find_stream(std::uint64_t id) const noexcept;

  static constexpr std::size_t kKeptFinished = 16;  // finished streams kept for a resumption

  std::uint64_t next_stream_ = 1;
  std::map<std::string, std::shared_ptr<Outbox>> by_request_;  // by request_key(id)
  std::shared_ptr<Outbox> standalone_;
  std::vector<std::shared_ptr<Outbox>> finished_;  // finished streams kept, oldest first (a few)
};

// One session, as small as it can be while idle: no task, no frame, no
// buffer; its id inline; what its client said of itself shared with the
// sessions of clients that said the same (Server::intern).
struct HttpSession {
  static constexpr std::size_t kIdLength = 32;  // 128 bits in hex

  explicit HttpSession(Server& server) : client(server, transport) {}
  std::string_view id() const noexcept { return {id_chars, kIdLength}; }

  char id_chars[kIdLength];
  bool priming = false;    // its streams open with a priming event (2025-11-25 and later)
  double last_used = 0.0;  // loop time of the last request
  HttpSessionTransport transport;
  Server::Connection client;  // after transport, which it refers to
};
}  // namespace corio::mcp::detail
