// WsServed (see ws_served.hpp): a WebSocket served by a handler set,
// parked between messages as an idle HTTP connection is
// (src/http/server/connection_life.cpp); and ServerWebSocket's methods.
#include "http/ws/ws_served.hpp"

#include <algorithm>
#include <chrono>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>

namespace corio::http {

namespace detail {

namespace {

double now() { return get_running_loop().time(); }

double seconds(std::chrono::milliseconds d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

WsServed::WsServed(std::shared_ptr<const WsRoute> route, StreamReader r, StreamWriter w, WsSetup setup,
                   corio::detail::ServerSlot slot)
    : IoWatch(&WsServed::on_edge),
      Adopted(&WsServed::on_server_end, std::move(slot)),
      s_(std::move(r), std::move(w), std::move(setup)),
      route_(std::move(route)) {
  if (route_->make_data) data_ = route_->make_data();
}

WsServed::~WsServed() {
  if (data_ != nullptr) route_->free_data(data_);
}

Coro<Response> WsServed::handle(std::shared_ptr<const WsRoute> route, Request& req) {
  WsAccept accept = accept_handshake(req, route->options);  // HTTPException: no switch
  auto [reader, writer] = co_await req.take_connection(std::move(accept.answer));
  TakenPlace place = taken_place(req);
  WsServedPtr self = std::make_shared<WsServed>(route, std::move(reader), std::move(writer),
                                                std::move(accept.setup), std::move(place.slot));
  LoopServer& server = place.server;
  server.adopt(self.get());
  if (route->options.heartbeat) self->arm(now() + seconds(*route->options.heartbeat));
  if (server.stopping()) self->close(ws_close::going_away, "server shutting down");
  co_await run(std::move(self), &req);
  co_return Response{};  // dropped: the connection was taken
}

Coro<void> WsServed::run(WsServedPtr self, Request* req) {
  WsServed& c = *self;
  // Rule 4, however this frame goes; not when the connection parked.
  struct Finisher {
    const WsServedPtr& self;
    bool armed = true;
    ~Finisher() {
      if (armed) finish(self);
    }
  } finisher{self};
  if (std::optional<TaskRef> t = current_task()) c.task_ = std::move(*t);
  WsState& s = c.s_;
  if (req != nullptr && c.route_->open) {
    c.busy_ = true;
    try {
      co_await c.route_->open(self, *req);
    } catch (const CancelledError&) {
      throw;
    } catch (...) {
      c.failed("open");
    }
    c.busy_ = false;
  }
  // Between messages it parks (try_park) at once until its second message
  // came, then only once the hot tick (on_tick) asked it to: a connection
  // that came back is likely busy, and a task per message costs it about
  // a fifth more CPU per echo; one that went quiet costs a task and its
  // frames only until the tick's second look, 1 to 2 s.
  WsMessage msg;
  while (!s.done) {
    switch (s.step(msg)) {
      case WsStep::message:
        c.idle_seen_ = false;
        if (c.served_one_ && !c.hot()) c.heat(&WsServed::on_tick);
        c.served_one_ = true;
        c.busy_ = true;
        try {
          co_await c.route_->message(*c.route_, WsServedPtr(self), std::move(msg));
        } catch (const CancelledError&) {
          throw;
        } catch (...) {
          c.failed("message");
        }
        c.busy_ = false;
        break;
      case WsStep::wait:
        if ((!c.hot() || c.park_wanted_) && c.try_park(self)) {
          finisher.armed = false;
          co_return;
        }
        try {
          co_await s.reader.readable();
        } catch (const std::system_error&) {  // reset or aborted: as an EOF without a close frame
          s.end(ws_close::abnormal, "the connection ended without a close frame", true);
        }
        break;
      case WsStep::drain:
        if (!co_await drained(s)) s.end(ws_close::abnormal, "the connection failed", true);
        break;
      case WsStep::ended:
        break;
    }
  }
}

// Rule 2: no task, no frame; the connection's own reference in self_.
bool WsServed::try_park(const WsServedPtr& self) {
  park_wanted_ = false;
  if (!corio::detail::watch_readable(s_.reader, *this)) return false;
  cool();
  idle_seen_ = false;
  parked_ = true;
  self_ = self;
  task_ = TaskRef();
  return true;
}

// The hot tick: a connection found waiting for its next message at two
// ticks in a row is woken to park (its task finds nothing to read). Not
// while a callback runs: that is not the peer's silence.
void WsServed::on_tick(Adopted* adopted) noexcept {
  auto* c = static_cast<WsServed*>(adopted);
  if (c->busy_ || !c->idle_seen_) {
    c->idle_seen_ = !c->busy_;
    return;
  }
  c->park_wanted_ = true;
  corio::detail::interrupt_wait(c->s_.reader);
}

void WsServed::on_edge(corio::detail::IoWatch* watch, bool closed) noexcept {
  auto* c = static_cast<WsServed*>(watch);
  const WsServedPtr self = std::move(c->self_);
  c->parked_ = false;
  if (!closed) {
    try {
      get_running_loop().create_task(run(self, nullptr));
      return;
    } catch (...) {
      // Out of memory: the connection ends here.
    }
  }
  c->s_.end(ws_close::abnormal, closed ? "the event loop closed" : "no task could serve it", true);
  finish(self);
}

// Rule 4.
void WsServed::finish(const WsServedPtr& self) noexcept {
  WsServed& c = *self;
  if (c.finished_) return;
  c.finished_ = true;
  if (!c.s_.done) c.s_.end(ws_close::abnormal, "the WebSocket's task ended", true);
  if (c.timer_) c.timer_.cancel();
  c.timer_ = TimerHandle();
  c.task_ = TaskRef();
  c.release();
  if (!c.route_->close) return;
  try {
    c.route_->close(self, c.s_.code.value_or(ws_close::abnormal), c.s_.reason());
  } catch (...) {
    c.report("close");
  }
}

// In a catch block: a callback threw. The connection closes with 1011,
// unless it had already failed (a send found the peer gone: std::system_error).
void WsServed::failed(const char* callback) noexcept {
  try {
    throw;
  } catch (const std::system_error&) {
    end_now(ws_close::abnormal, "the connection failed", false);
    return;
  } catch (...) {
  }
  report(callback);
  try {
    close(ws_close::internal_error, {});
  } catch (...) {
    end_now(ws_close::internal_error, "the handler failed", false);
  }
}

// As a route handler's error (HttpConnection::handler_failed), unless the
// connection was already closing: then an error is the close's echo (a send
// refused), not news.
void WsServed::report(const char* callback) noexcept {
  if (s_.close_sent && callback != std::string_view("close")) return;
  try {
    get_running_loop().call_exception_handler(
        {std::string("Error in the WebSocket's ") + callback + " callback", std::current_exception(),
         current_task()});
  } catch (...) {
    // No loop running (its close): nowhere to report to.
  }
}

// Graceful: the peer has the shorter of close_timeout and the server's
// ws_shutdown_timeout to answer, so a stalled peer cannot hold a Ctrl-C for
// the whole close_timeout (10 s by default).
void WsServed::on_server_end(Adopted* adopted, bool graceful) noexcept {
  auto* c = static_cast<WsServed*>(adopted);
  if (graceful) {
    c->close_within(ws_close::going_away, "server shutting down",
                    std::min(c->ws_shutdown_timeout(), c->s_.settings().close_timeout));
    return;
  }
  TaskRef task = c->task_;
  if (!c->s_.done) c->s_.send_close(ws_close::going_away, "server closed");
  c->end_now(ws_close::going_away, "server closed", true);
  if (task.task() != nullptr) task.cancel("server closed");
}

void WsServed::close(int code, std::string_view reason) { close_within(code, reason, s_.settings().close_timeout); }

void WsServed::close_within(int code, std::string_view reason, std::chrono::milliseconds within) {
  check_close(code, reason);
  if (s_.close_sent || s_.done) return;
  s_.send_close(code, reason);
  arm(now() + seconds(within));
}

void WsServed::end_now(int code, std::string why, bool graceful) noexcept {
  if (s_.done) return;
  if (!parked_) {
    s_.end(code, std::move(why), !graceful);  // its task notices (rule 3)
    return;
  }
  corio::detail::unwatch(s_.reader, *this);  // before the transport closes
  parked_ = false;
  const WsServedPtr self = std::move(self_);
  s_.end(code, std::move(why), !graceful);
  finish(self);
}

void WsServed::arm(double when) {
  if (timer_) timer_.cancel();
  timer_ = get_running_loop().call_at(when, [this] { on_timer(); });
}

void WsServed::on_timer() noexcept {
  timer_ = TimerHandle();
  if (s_.done) return;
  if (s_.close_sent) {
    end_now(ws_close::abnormal, "no close frame from the peer in time", false);
    return;
  }
  try {
    heartbeat();
  } catch (...) {
    end_now(ws_close::abnormal, "the heartbeat failed", false);  // out of memory
  }
}

// As WebSocket's heartbeat (websocket.hpp): a ping after `heartbeat` of
// silence, the connection aborted if nothing came back within half of it.
// Not while a callback runs: nothing is read then, by design, so silence
// says nothing about the peer.
void WsServed::heartbeat() {
  const double period = seconds(*route_->options.heartbeat);
  const double t = now();
  if (busy_) {
    ping_sent_ = 0;
    arm(t + period);
    return;
  }
  if (ping_sent_ != 0) {
    if (s_.last_heard < ping_sent_) {
      end_now(ws_close::abnormal, "no answer to the heartbeat's ping", false);
      return;
    }
    ping_sent_ = 0;
  }
  if (t < s_.last_heard + period) {
    arm(s_.last_heard + period);
    return;
  }
  s_.write_frame(Opcode::ping, true, false, {});
  ping_sent_ = t;
  arm(t + period / 2);
}

void* ws_user_data(const WsServed& s) noexcept { return s.data(); }

std::function<Coro<Response>(Request&)> ws_route_handler(std::shared_ptr<const WsRoute> route) {
  return [route = std::move(route)](Request& req) { return WsServed::handle(route, req); };
}

// The handle's sends keep the connection's state: the handle itself may go
// while one waits (a broadcast's list edited by a `close`). Not a coroutine:
// send_message's frame holds the reference.
Coro<void> ServerWebSocketBase::send(const WsMessage& msg) const { return send_message(s_->state(), msg, s_); }

Coro<void> ServerWebSocketBase::send_str(std::string_view text) const {
  const WsServedPtr keep = s_;
  const WsMessage msg{WsMsgType::text, std::string(text)};
  co_await send_message(keep->state(), msg);
}

Coro<void> ServerWebSocketBase::send_bytes(std::string_view data) const {
  const WsServedPtr keep = s_;
  const WsMessage msg{WsMsgType::binary, std::string(data)};
  co_await send_message(keep->state(), msg);
}

Coro<void> ServerWebSocketBase::ping(std::string_view payload) const {
  const WsServedPtr keep = s_;
  co_await send_control(keep->state(), Opcode::ping, payload);
}

Coro<void> ServerWebSocketBase::pong(std::string_view payload) const {
  const WsServedPtr keep = s_;
  co_await send_control(keep->state(), Opcode::pong, payload);
}

void ServerWebSocketBase::close(int code, std::string_view reason) const { s_->close(code, reason); }
void ServerWebSocketBase::abort() const noexcept { s_->end_now(ws_close::abnormal, "aborted", false); }
bool ServerWebSocketBase::closed() const noexcept { return s_->state().close_sent || s_->state().done; }
std::optional<int> ServerWebSocketBase::close_code() const noexcept {
  return s_->state().done ? s_->state().code : std::nullopt;
}
const std::string& ServerWebSocketBase::close_reason() const noexcept { return s_->state().reason(); }
const std::string& ServerWebSocketBase::protocol() const noexcept { return s_->state().protocol(); }
bool ServerWebSocketBase::compressed() const noexcept { return s_->state().deflater != nullptr; }
std::string ServerWebSocketBase::peername() const { return s_->state().writer.get_extra_info("peername"); }

}  // namespace detail

}  // namespace corio::http
