// One WebSocket served by a handler set (ws_handlers.hpp): the connection,
// its WebSocket state, the route's callbacks and the user's data, with no
// task and no frame while it waits for the next message.
//
// Lifetime rules:
//   1. A WsServed lives in a shared_ptr. While its connection is open the
//      connection holds one reference itself: the task serving it (its
//      frame's parameter) or, parked, self_ (the loop's watch of the socket
//      has a raw pointer). finish() drops it; ServerWebSocket handles keep
//      the object (not the connection) for as long as they live.
//   2. Parked, it is an IoWatch in its socket's slot: the next byte starts
//      a task (on_edge), the loop's close ends it (on_edge, closed), and
//      whatever ends it meanwhile (an abort, a timer, the server) unwatches
//      it first and finishes it there, since no task will. It parks at once
//      until its second message came; from then on (hot) its task waits for
//      the next message, on the LoopServer's hot list, and parks once its
//      tick found it waiting twice in a row (run()'s comment says why).
//   3. Served, its task notices the end at its next step (the transport
//      closed under it); a non-graceful end by the server also cancels it.
//   4. finish() runs once, whatever ended the connection (the task's frame
//      destroyed at the loop's close included): it cancels the timer, leaves
//      the server's list and calls `close`.
//   5. One timer (a TimerHandle, armed only with a heartbeat or while
//      closing): the heartbeat's next check, or the close's deadline.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <corio/detail/io_wait.hpp>
#include <corio/handle.hpp>
#include <corio/http/ws_handlers.hpp>
#include <corio/task.hpp>

#include "http/server/server_connection.hpp"
#include "http/ws/ws_session.hpp"

namespace corio::http::detail {

class WsServed : private corio::detail::IoWatch, private Adopted {
 public:
  WsServed(std::shared_ptr<const WsRoute> route, StreamReader r, StreamWriter w, WsSetup setup,
           corio::detail::ServerSlot slot);
  WsServed(const WsServed&) = delete;
  WsServed& operator=(const WsServed&) = delete;
  ~WsServed();

  // The route handler (ws_route_handler): the handshake, adopted by the
  // server, `open`, then the messages already buffered; returns once the
  // connection parked or ended.
  static Coro<Response> handle(std::shared_ptr<const WsRoute> route, Request& req);

  WsState& state() noexcept { return s_; }
  void* data() const noexcept { return data_; }
  // The handle's close(): our close frame, then the peer's answer read
  // within close_timeout.
  void close(int code, std::string_view reason);
  // Ends the connection now (the transport aborted or, graceful, closed).
  void end_now(int code, std::string why, bool graceful) noexcept;
  bool parked() const noexcept { return parked_; }

 private:
  // From `open` (req set) or from a byte that came while parked, until the
  // connection parks again or ends.
  static Coro<void> run(WsServedPtr self, Request* req);
  bool try_park(const WsServedPtr& self);
  static void on_tick(Adopted* adopted) noexcept;
  static void finish(const WsServedPtr& self) noexcept;
  void failed(const char* callback) noexcept;
  void report(const char* callback) noexcept;
  static void on_edge(corio::detail::IoWatch* watch, bool closed) noexcept;
  static void on_server_end(Adopted* adopted, bool graceful) noexcept;
  void close_within(int code, std::string_view reason, std::chrono::milliseconds within);
  void arm(double when);
  void on_timer() noexcept;
  void heartbeat();

  WsState s_;
  std::shared_ptr<const WsRoute> route_;
  void* data_ = nullptr;  // the user's (WsRoute::make_data)
  WsServedPtr self_;      // rule 1: the parked connection's own reference
  TimerHandle timer_;     // rule 5
  double ping_sent_ = 0;  // the heartbeat's unanswered ping (0: none)
  TaskRef task_;          // the task serving it, if any
  bool parked_ : 1 = false;
  bool busy_ : 1 = false;  // in `open` or `message`: nothing is read meanwhile
  bool finished_ : 1 = false;
  bool served_one_ : 1 = false;   // a message was handled: the next one makes it hot
  bool idle_seen_ : 1 = false;    // the hot tick found it waiting, no message since
  bool park_wanted_ : 1 = false;  // the hot tick's: park at the next wait
};

}  // namespace corio::http::detail
