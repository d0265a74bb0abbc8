// The server's private parts: what the Server shares with its loops, one
// loop's listener and connections, and one connection's request loop.
//
// Lifetime rules:
//   1. ServerShared (routes, middleware, options) is read-only once
//      start() ran; every LoopServer holds it by shared_ptr, so workers on
//      other threads read it without locks.
//   2. A LoopServer lives while its Server or any of its connections' tasks
//      does (each holds a shared_ptr), so a connection unwinding after the
//      Server is gone still finds it.
//   3. An HttpConnection is its task's while one serves it (serve()'s
//      frame owns it), and its LoopServer's while it is parked: idle with
//      no task, its reader watched by the loop (an IoWatch), until bytes
//      come (a new task serves it) or the LoopServer ends it (end()). The
//      LoopServer keeps a raw pointer to every connection, from its
//      construction to its destruction.
//   4. A RequestState is an HttpConnection's from its request's first byte
//      until the connection waits for the next one with nothing received
//      (or ends), or until take_connection() hands the connection over; in
//      between it is the LoopServer's, kept for the next request of any of
//      its connections (at most kSpareRequestStates).
//   5. A request's head lives in its own block, so that a taken connection
//      keeps it alone (shrunk to fit) for its handler's Request, as long as
//      the handler runs, and gives the rest of its RequestState back. It
//      holds that head in its state's pointer (RequestSlot): few connections
//      are taken, and every other one would carry a second pointer.
//   6. An Adopted connection (a WebSocket served by a handler set) outlives
//      the HttpConnection it came from, with its max_connections slot: the
//      LoopServer lists it from adopt() until it says it is done (release())
//      or until close() (or shutdown() past its deadline) ended it; either
//      way it is off the list when close() or shutdown() returns. One served
//      by a task between its messages (hot) is also on the LoopServer's hot
//      list, from heat() until cool() or its forget(): a timer visits that
//      list once a second, and only while it is not empty.
//   7. Every HttpConnection is in exactly one of its LoopServer's wait lists
//      (sweeper.cpp), from its construction to its destruction: the list of
//      its timed wait (or of its last one, its clock stopped), or the
//      untimed one.
#pragma once

#include <chrono>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <corio/detail/io_wait.hpp>
#include <corio/event.hpp>
#include <corio/handle.hpp>
#include <corio/http/server.hpp>
#include <corio/server.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>
#include <corio/task.hpp>

#include "http/server/date_cache.hpp"
#include "http/server/file_ranges.hpp"

namespace corio::http::detail {

struct ServerShared {
  ServerOptions options;
  Router router;
  std::vector<Middleware> middleware;
  ErrorHandler on_error;  // empty: Response::from
};

class HttpConnection;
class LoopServer;

// A connection another protocol serves once its handler returned, with no
// HttpConnection and no task while it idles (lifetime rule 6; a WebSocket's
// handler set, src/http/ws/ws_served.hpp). `end` is how the LoopServer ends
// it: graceful (shutdown(): a goodbye, then release() when done) or not
// (close(), or shutdown() past its deadline: at once, and off the list).
class Adopted {
 public:
  using End = void (*)(Adopted* self, bool graceful) noexcept;
  Adopted(End end, corio::detail::ServerSlot slot) noexcept : slot_(std::move(slot)), end_(end) {}
  Adopted(const Adopted&) = delete;
  Adopted& operator=(const Adopted&) = delete;
  ~Adopted() { release(); }
  // Done: off the server's list (if on it), its slot freed.
  void release() noexcept;
  // Another share of max_connections from the same server (one of its h2
  // connection's streams taken: a WebSocket counts as a connection).
  corio::detail::ServerSlot another_slot() const noexcept;
  // How long a graceful End waits for a WebSocket peer's answer to its
  // goodbye: the server's ServerOptions::ws_shutdown_timeout (none when off
  // the list: max()).
  std::chrono::milliseconds ws_shutdown_timeout() const noexcept;

  // Lifetime rule 6's hot list: `tick` is called about once a second while
  // the connection is on it (it may flag and wake, not end the connection).
  // heat() does nothing when already hot or not on a server's list.
  using Tick = void (*)(Adopted* self) noexcept;
  bool hot() const noexcept { return hot_index_ != kCold; }
  void heat(Tick tick);
  void cool() noexcept;

 private:
  friend class LoopServer;
  static constexpr std::uint32_t kCold = UINT32_MAX;
  corio::detail::ServerSlot slot_;  // counted until release()
  End end_;
  LoopServer* server_ = nullptr;
  std::uint32_t index_ = 0;
  std::uint32_t hot_index_ = kCold;  // in the hot list; in index_'s padding
};

// What a connection waits for, each with its own clock (server_connection.cpp
// says which), and so its own list in the sweeper (sweeper.cpp). `none`: no
// clock runs (a handler at work, a taken connection).
enum class Wait : std::uint8_t { none, header, idle, body, send, linger };
constexpr std::size_t kWaitKinds = 6;

// Deadlines are the loop's time in whole milliseconds, wrapping at 2^32 (49
// days), compared by their signed difference: a timeout is at most 2^30 ms
// (12 days; longer ones are enforced at that).
std::uint32_t loop_ms(bool round_up);
std::uint32_t deadline_after(std::chrono::milliseconds timeout);
inline bool earlier(std::uint32_t a, std::uint32_t b) noexcept {
  return static_cast<std::int32_t>(a - b) < 0;
}

// What a request in progress needs, and an idle connection does not: the
// parser, the head, the body's decoder, the handler's answer, the answers not
// yet handed to the writer. Reused from request to request, with the capacity
// its strings and field list grew to. The answer is here rather than in the
// frame that awaits the handler, which a WebSocket's handler keeps for the
// connection's life (lifetime rule 5).
struct RequestState {
  explicit RequestState(const Limits& limits)
      : parser(limits), head(std::make_unique<RequestHead>()) {}
  RequestParser parser;
  std::unique_ptr<RequestHead> head;  // never null (lifetime rule 5)
  std::optional<BodyDecoder> body;
  Response resp;    // the handler's answer, moved out of its frame
  std::string out;  // responses not yet handed to the writer (pipelining batches them)
  std::chrono::steady_clock::time_point started;  // for the access log
  int sent_status = 0;                            // of the last head written, for the access log
  // ServerOptions::min_send_rate's window, over this request's waits for
  // the peer to take our bytes (an idle connection sends nothing): the
  // bytes handed to the writer or the socket (minus the writer's buffer:
  // taken), those taken when the window began, the waiting it holds so far,
  // and when the current wait began (0: not waiting).
  std::uint64_t handed = 0;
  std::uint64_t window_mark = 0;
  double window_waited = 0;
  double wait_began = 0;
};

// Lifetime rules 4 and 5 in one pointer's room: a connection's request
// state (or none), or, once a taken connection gave its state back, its
// head alone. Bit 0 (free: both types are 8-aligned) tells them apart, as
// LLVM's PointerIntPair does; to the request loop, a slot with a head alone
// is empty.
class RequestSlot {
 public:
  RequestSlot() noexcept = default;
  RequestSlot(const RequestSlot&) = delete;
  RequestSlot& operator=(const RequestSlot&) = delete;
  ~RequestSlot() { reset(); }
  explicit operator bool() const noexcept { return state() != nullptr; }
  // Unchecked (the request loop's every field access): only when a state
  // is there, which every use tests first or is sure of.
  RequestState* operator->() const noexcept { return reinterpret_cast<RequestState*>(p_); }
  RequestState& operator*() const noexcept { return *operator->(); }
  RequestSlot& operator=(std::unique_ptr<RequestState> s) noexcept {
    reset();
    p_ = reinterpret_cast<std::uintptr_t>(s.release());
    return *this;
  }
  std::unique_ptr<RequestState> take() noexcept {
    std::unique_ptr<RequestState> s(state());
    if (s) p_ = 0;
    return s;
  }
  void keep_head_alone(std::unique_ptr<RequestHead> head) noexcept {
    reset();
    p_ = reinterpret_cast<std::uintptr_t>(head.release()) | 1;
  }

 private:
  RequestState* state() const noexcept {
    return (p_ & 1) != 0 ? nullptr : reinterpret_cast<RequestState*>(p_);
  }
  void reset() noexcept {
    if ((p_ & 1) != 0) {
      delete reinterpret_cast<RequestHead*>(p_ & ~std::uintptr_t{1});
    } else {
      delete state();
    }
    p_ = 0;
  }
  std::uintptr_t p_ = 0;
};

// One loop's share of a Server: its listener, its connections, the sweeper
// that enforces their timeouts (sweeper.cpp).
class LoopServer : public std::enable_shared_from_this<LoopServer> {
 public:
  explicit LoopServer(std::shared_ptr<const ServerShared> shared);
  LoopServer(const LoopServer&) = delete;
  LoopServer& operator=(const LoopServer&) = delete;
  ~LoopServer();

  Coro<void> start(std::string host, std::uint16_t port, bool reuse_port);
  std::uint16_t port() const noexcept { return port_; }
  Coro<void> wait_stopped();
  void close();  // at once: stop accepting, abort every connection
  Coro<void> shutdown(std::chrono::milliseconds deadline);

  void add(HttpConnection* c);
  void remove(HttpConnection* c) noexcept;
  // Lifetime rule 6 (server_adopted.cpp). end_adopted(): each adopted
  // connection's End, graceful or not; not graceful, each is off the list.
  void adopt(Adopted* a);
  void forget(Adopted* a) noexcept;
  void end_adopted(bool graceful) noexcept;
  void heat(Adopted* a, Adopted::Tick tick);
  void cool(Adopted* a) noexcept;
  // Ends c by `how` (abort, close, time_out); a parked connection, which no
  // task will end, is unwatched first and destroyed after.
  void end(HttpConnection* c, void (HttpConnection::*how)() noexcept) noexcept;
  // Lifetime rule 4.
  std::unique_ptr<RequestState> take_request_state();
  void give_back(std::unique_ptr<RequestState> state) noexcept;
  std::size_t spare_request_states() const noexcept { return spare_.size(); }

  // The sweeper (sweeper.cpp): c's clock for a wait of kind w runs for w's
  // timeout from now (start_clock), or until `deadline` (arm: Wait::linger,
  // or a clock put back). HttpConnection::stop_wait_clock() stops it.
  void start_clock(HttpConnection* c, Wait w) noexcept;
  void arm(HttpConnection* c, Wait w, std::uint32_t deadline) noexcept;

  const ServerShared& shared() const noexcept { return *shared_; }
  DateCache& date() noexcept { return date_; }
  bool stopping() const noexcept { return stopping_; }

 private:
  void arm_hot_tick();  // lifetime rule 6 (server_adopted.cpp)
  // An intrusive list in deadline order (HttpConnection::wait_prev/next).
  struct WaitList {
    HttpConnection* head = nullptr;
    HttpConnection* tail = nullptr;
  };
  WaitList& list(Wait w) noexcept { return lists_[static_cast<std::size_t>(w)]; }
  void link(HttpConnection* c, Wait w) noexcept;
  void unlink(HttpConnection* c) noexcept;
  void to_untimed(HttpConnection* c) noexcept;
  void arm_at(HttpConnection* c, Wait w, std::uint32_t deadline, std::uint64_t now) noexcept;
  static std::array<std::uint32_t, kWaitKinds> timeouts_ms(const ServerOptions& opts);
  std::vector<HttpConnection*> all() const;  // a copy: ending a connection edits the lists
  void sweep(std::uint64_t at);
  void end_due(Wait w, std::uint64_t now);
  void nudge_idle(std::uint64_t now);
  void check_send_rates();
  std::optional<std::uint64_t> next_due(std::uint64_t now) const noexcept;
  void schedule(std::uint64_t due) noexcept;

  std::shared_ptr<const ServerShared> shared_;
  corio::Server listener_;
  std::uint16_t port_ = 0;
  std::vector<Adopted*> adopted_;  // lifetime rule 6
  std::vector<std::pair<Adopted*, Adopted::Tick>> hot_;  // lifetime rule 6
  std::optional<TimerHandle> hot_tick_;                   // armed while hot_ is not empty
  std::vector<std::unique_ptr<RequestState>> spare_;
  std::array<WaitList, kWaitKinds> lists_;
  std::size_t conns_ = 0;
  HttpConnection* park_cursor_ = nullptr;  // the first idle one not yet nudged (sweeper.cpp)
  std::array<std::uint32_t, kWaitKinds> timeout_ms_;  // per Wait, clamped (loop_ms)
  std::uint64_t tick_ms_;
  std::optional<TimerHandle> sweeper_;
  std::uint64_t sweep_at_ = 0;  // when sweeper_ fires, in loop ms (not wrapped)
  DateCache date_;
  Event drained_;  // set while there is no connection
  Event stopped_;
  bool stopping_ = false;
};

class HttpConnection : private corio::detail::IoWatch {
 public:
  HttpConnection(LoopServer& server, StreamReader reader, StreamWriter writer,
                 corio::detail::ServerSlot slot);
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;
  ~HttpConnection();

  // A new connection from the listener (an adopting server: server.hpp),
  // served by a task of its own. A null or stopping server closes it.
  static void start(const std::shared_ptr<LoopServer>& server, StreamReader reader,
                    StreamWriter writer, corio::detail::ServerSlot slot);
  // The request loop, until the peer or the server ends the connection, or
  // until it is parked (lifetime rule 3): then the task ends, and the first
  // byte of the next request starts another one here.
  static Coro<void> serve(std::shared_ptr<LoopServer> server, std::unique_ptr<HttpConnection> c);

  // For Request: the body, on demand.
  Coro<std::string> read_chunk();
  Coro<std::string> read_all();
  const Headers& trailers() const noexcept;
  std::string peername() const { return writer_.get_extra_info("peername"); }
  // For Request: an Upgrade's or a CONNECT's switch (request.hpp).
  Coro<std::pair<StreamReader, StreamWriter>> take_connection(Response answer);
  void release_for_new_protocol();
  // For a taken connection's new owner that outlives the handler (lifetime
  // rule 6): its max_connections slot, and the LoopServer to be adopted by.
  corio::detail::ServerSlot give_slot() noexcept { return std::move(slot_); }
  LoopServer& loop_server() noexcept { return server_; }

  // For the response writers: until the writer took our bytes, or until it
  // can take more, each wait within send_timeout (then the sweeper aborts).
  Coro<void> drain();
  Coro<void> wait_writable();
  void write(std::string_view bytes);  // to the writer, unless it was aborted
  void sent_by_hand(std::uint64_t n) noexcept { st_->handed += n; }  // sendfile(2)'s bytes

  // For LoopServer.
  TaskRef task;  // the one serving this connection
  std::optional<TaskRef> reported_task() const {
    return task.task() != nullptr ? std::optional<TaskRef>(task) : std::nullopt;
  }
  void abort() noexcept { writer_.abort(); }
  bool sends_too_slowly(double now) noexcept;  // below ServerOptions::min_send_rate
  void time_out() noexcept;                    // the sweeper's abort
  void close() noexcept { writer_.close(); }
  // The sweeper's nudge, a tick after a busy connection began waiting for
  // a request in its task: woken, it parks. Not at once: a busy
  // connection's requests would each start a task.
  void nudge() noexcept;
  bool parked() const noexcept { return parked_; }
  void unpark() noexcept;  // for end(): the watch goes, nothing starts

 private:
  struct HandlerAnswer;  // respond()'s wait for the handler
  bool rest();  // before the wait for a request: false when none is to come
  // The clock of a wait (lifetime rule 7): from now, or put back.
  void start_wait_clock(Wait w) noexcept { server_.start_clock(this, w); }
  // Stopped, a clock leaves the connection where it is in its list (the
  // sweeper or its next clock moves it): a request costs one move, not two.
  void stop_wait_clock() noexcept { clock_on = false; }
  bool wait_clock_runs() const noexcept { return clock_on; }
  Wait timed_wait() const noexcept { return clock_on ? static_cast<Wait>(wait_kind) : Wait::none; }
  bool try_park();
  static void on_edge(corio::detail::IoWatch* self, bool closed) noexcept;
  Coro<bool> read_head();
  bool h2_preface();
  void to_h2();
  Coro<void> handle_request();
  Coro<void> respond();
  void handler_failed(Request& req);
  void answer(Response resp);  // into st_->resp, unless the connection was taken
  RequestHead& head() noexcept { return *st_->head; }
  Coro<bool> discard_body(Response& answer);
  Coro<void> reject(int status, std::string message);
  Coro<void> linger();
  Coro<void> under_send_timeout(Coro<void> wait);
  void use_absolute_form();
  Coro<std::size_t> fill(Wait w);  // w: header or body
  Coro<std::size_t> drain_and_fill(Wait w);
  Coro<std::size_t> start_read(Wait w);
  void flush();
  void send_continue();
  bool check_expect();
  void start_clock();

  // Response writing, in server_response.cpp. A body (most answers) goes
  // out at once, without a coroutine frame: needs_wait() (which also turns
  // an answer with a bad field into a 500) says when to await send()
  // instead, for a file or a stream (file_answer.cpp, through Sink).
  struct Sink;
  bool needs_wait(Response& resp);
  std::uint64_t send_body(Response& resp);
  Coro<std::uint64_t> send(Response& resp);
  void write_head(const Response& resp, std::optional<std::uint64_t> content_length);
  Coro<void> send_range(int fd, ByteRange range);
  Coro<void> sendfile_all(int fd, std::uint64_t from, std::uint64_t size);
  Coro<void> copy_file(int fd, std::uint64_t from, std::uint64_t size);
  void log_access(std::uint64_t bytes);

  // Packed (an idle connection keeps every byte of these): the flags
  // share the padding after the counters.
  const ServerShared& shared() const noexcept { return server_.shared(); }
  corio::detail::ServerSlot slot_;  // first in, last out: counted until the socket is closed
  LoopServer& server_;
  StreamReader reader_;
  StreamWriter writer_;
  RequestSlot st_;  // lifetime rules 4 and 5
  // Bits: with the deadline they fit the word after the pointers, and the
  // object (88 bytes with the wait links) one 96-byte chunk.
  bool served_one_ : 1 = false;       // a request was answered: the idle clock applies
  bool keep_alive_ : 1 = true;
  bool head_only_ : 1 = false;        // HEAD: the head alone
  bool expect_continue_ : 1 = false;  // "100 Continue" still owed before reading the body
  bool body_failed_ : 1 = false;      // the body broke the protocol: close after answering
  bool linger_ : 1 = false;           // the peer may still be sending: close in stages
  bool tls_ : 1 = false;
  bool taken_ : 1 = false;  // handed over by take_connection(): no longer ours
  bool parked_ : 1 = false;
  bool park_wanted_ : 1 = false;  // the sweeper's: park at the next chance
  bool hot_ : 1 = false;          // a second request came: waits park at the sweeper's nudge only

 public:
  // For LoopServer, here to share the flags' word.
  bool idle : 1 = false;  // waiting for a request, nothing of it received
  std::uint8_t wait_kind : 3 = 0;  // a Wait: the list this connection is in (lifetime rule 7)
  bool clock_on : 1 = false;       // its wait's clock runs (else the list's order is all it keeps)
  std::uint32_t deadline = 0;      // of the wait's clock, unless Wait::none (loop_ms)
  HttpConnection* wait_prev = nullptr;
  HttpConnection* wait_next = nullptr;
};

// Where a connection taken from its request (a WebSocket) goes among its
// server's adopted connections (rule 6): HTTP/1.1's slot moves to it from
// the connection; an h2 stream takes another of the same server's (its
// connection keeps its own), so a WebSocket counts once on either version.
struct TakenPlace {
  LoopServer& server;
  corio::detail::ServerSlot slot;
};
TakenPlace taken_place(Request& req);

}  // namespace corio::http::detail
