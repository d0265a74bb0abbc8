// LoopServer's sweeper: the connections' timeouts, the send-rate floor, and
// the nudge that parks a busy connection gone idle.
//
// Rather than a timer per connection re-armed per request, each connection is
// in one intrusive list per kind of wait (Wait: header, idle, body, send,
// linger, and none for the untimed), in deadline order. Every wait of one
// kind but linger has the same timeout, so a clock started now goes at the
// back of its list and the list stays sorted: starting a clock is O(1) (a
// put-back clock, the lingering one: inserted from the back, O(1) in
// practice). Stopping one clears a bit: the connection keeps its place until
// its next clock moves it, or the sweeper meets it at the front (a request
// costs one move, not two; callgrind said the second was 1% of a GET). A
// sweep ends the fronts that are due and stops at the first that is not:
// O(due), not O(connections). A timer wheel would do the same with
// buckets; with one timeout per kind, sorted lists need no buckets and no
// cascading.
//
// One timer wakes the sweeper, at the earliest due time rounded up to the
// tick (a quarter of the shortest timeout, 10 ms to 1 s): a deadline is met
// at most a tick late, as when the sweeper visited every connection every
// tick, and connections due within one tick end in one wake. With nothing
// due (10,000 parked connections and idle_timeout 60 s) the timer sleeps
// until the first of them is.
//
// Two things still need a look before any deadline: a busy connection
// waiting for its next request in its task is nudged to park a tick after
// its wait began (park_cursor_ walks the idle list once, in the order the
// waits began), and with a min_send_rate every connection in a send wait is
// checked each tick (those are sending: busy, not idle ones).
#include <algorithm>

#include <corio/event_loop.hpp>

#include "http/server/server_connection.hpp"

namespace corio::http::detail {

using std::chrono::milliseconds;

namespace {

constexpr std::uint64_t kMaxTimeoutMs = std::uint64_t{1} << 30;  // loop_ms's comparisons

// Rounded up by adding 1 rather than by ceil(): a cheaper conversion
// (signed: one instruction). The loop's pass_time(), not a clock read per
// request (callgrind: ~50 instructions, and a vDSO call that perf put at
// 0.6% of the server's CPU): a deadline is then at most 1 ms late, and
// early by no more than the run phase it was set in.
std::uint64_t loop_ms64(bool round_up) {
  const auto ms = static_cast<std::int64_t>(get_running_loop().pass_time() * 1000.0);
  return static_cast<std::uint64_t>(ms) + (round_up ? 1 : 0);
}

// A wrapped deadline, unwrapped near `now` (deadlines are within 2^31 ms of it).
std::uint64_t unwrap(std::uint32_t deadline, std::uint64_t now) noexcept {
  return now + static_cast<std::uint64_t>(static_cast<std::int64_t>(
                   static_cast<std::int32_t>(deadline - static_cast<std::uint32_t>(now))));
}

}  // namespace

std::uint32_t loop_ms(bool round_up) { return static_cast<std::uint32_t>(loop_ms64(round_up)); }

std::uint32_t deadline_after(milliseconds timeout) {
  const auto ms = static_cast<std::uint64_t>(std::max<std::int64_t>(timeout.count(), 0));
  return static_cast<std::uint32_t>(loop_ms64(true) + std::min(ms, kMaxTimeoutMs));
}

std::array<std::uint32_t, kWaitKinds> LoopServer::timeouts_ms(const ServerOptions& opts) {
  auto ms = [](milliseconds t) {
    return static_cast<std::uint32_t>(
        std::clamp<std::int64_t>(t.count(), 0, static_cast<std::int64_t>(kMaxTimeoutMs)));
  };
  std::array<std::uint32_t, kWaitKinds> out{};
  out[static_cast<std::size_t>(Wait::header)] = ms(opts.header_timeout);
  out[static_cast<std::size_t>(Wait::idle)] = ms(opts.idle_timeout);
  out[static_cast<std::size_t>(Wait::body)] = ms(opts.body_timeout);
  out[static_cast<std::size_t>(Wait::send)] = ms(opts.send_timeout);
  out[static_cast<std::size_t>(Wait::linger)] = ms(opts.lingering_timeout);
  return out;
}

void LoopServer::add(HttpConnection* c) {
  link(c, Wait::none);
  ++conns_;
  drained_.clear();
}

void LoopServer::remove(HttpConnection* c) noexcept {
  unlink(c);
  if (--conns_ == 0 && adopted_.empty()) drained_.set();
}

// Inserted from the back, after the last one due no later: the back itself
// when c's clock starts now with its kind's timeout.
void LoopServer::link(HttpConnection* c, Wait w) noexcept {
  WaitList& l = list(w);
  HttpConnection* after = l.tail;
  if (w != Wait::none) {
    while (after != nullptr && earlier(c->deadline, after->deadline)) after = after->wait_prev;
  }
  c->wait_kind = static_cast<std::uint8_t>(w);
  c->clock_on = w != Wait::none;
  c->wait_prev = after;
  c->wait_next = after != nullptr ? after->wait_next : l.head;
  (after != nullptr ? after->wait_next : l.head) = c;
  (c->wait_next != nullptr ? c->wait_next->wait_prev : l.tail) = c;
  if (w == Wait::idle && park_cursor_ == nullptr) park_cursor_ = c;
}

void LoopServer::unlink(HttpConnection* c) noexcept {
  WaitList& l = list(static_cast<Wait>(c->wait_kind));
  if (c == park_cursor_) park_cursor_ = c->wait_next;
  (c->wait_prev != nullptr ? c->wait_prev->wait_next : l.head) = c->wait_next;
  (c->wait_next != nullptr ? c->wait_next->wait_prev : l.tail) = c->wait_prev;
  c->wait_prev = c->wait_next = nullptr;
}

// Per request (the idle clock, and a head's or a body's when they come in
// pieces): one read of the clock, two list edits, and a compare with the
// sweeper's wake-up (a timer only when it must come sooner).
void LoopServer::start_clock(HttpConnection* c, Wait w) noexcept {
  const std::uint64_t now = loop_ms64(true);
  arm_at(c, w, static_cast<std::uint32_t>(now + timeout_ms_[static_cast<std::size_t>(w)]), now);
}

void LoopServer::arm(HttpConnection* c, Wait w, std::uint32_t deadline) noexcept {
  arm_at(c, w, deadline, loop_ms64(true));
}

void LoopServer::arm_at(HttpConnection* c, Wait w, std::uint32_t deadline,
                        std::uint64_t now) noexcept {
  unlink(c);
  c->deadline = deadline;
  link(c, w);
  const std::uint64_t due = unwrap(deadline, now);
  // A look a tick from now: its nudge, or its send rate's check.
  const bool look = c == park_cursor_ || (w == Wait::send && shared_->options.min_send_rate > 0);
  const std::uint64_t wake = look ? std::min(due, now + tick_ms_) : due;
  if (!sweeper_ || wake < sweep_at_) schedule(wake);  // the usual case: no call
}

void LoopServer::to_untimed(HttpConnection* c) noexcept {
  unlink(c);
  link(c, Wait::none);
}

std::vector<HttpConnection*> LoopServer::all() const {
  std::vector<HttpConnection*> out;
  out.reserve(conns_);
  for (const WaitList& l : lists_) {
    for (HttpConnection* c = l.head; c != nullptr; c = c->wait_next) out.push_back(c);
  }
  return out;
}

// At `due` rounded up to the tick, unless the sweeper wakes sooner already.
void LoopServer::schedule(std::uint64_t due) noexcept {
  if (sweeper_ && sweep_at_ <= due) return;  // the usual case, before a division
  const std::uint64_t at = (due + tick_ms_ - 1) / tick_ms_ * tick_ms_;
  if (sweeper_ && sweep_at_ <= at) return;
  if (sweeper_) sweeper_->cancel();
  try {
    sweeper_ = get_running_loop().call_at(static_cast<double>(at) / 1000.0, [this, at] {
      sweeper_.reset();
      sweep(at);
    });
    sweep_at_ = at;
  } catch (...) {
    sweeper_.reset();  // out of memory: the next clock started tries again
  }
}

// `at`: when it was due (the loop's time, in ms and rounded down, may be a
// hair short of it).
void LoopServer::sweep(std::uint64_t at) {
  const std::uint64_t now = std::max(loop_ms64(false), at);
  for (Wait w : {Wait::header, Wait::idle, Wait::body, Wait::send, Wait::linger}) end_due(w, now);
  nudge_idle(now);
  if (shared_->options.min_send_rate > 0) check_send_rates();
  if (std::optional<std::uint64_t> due = next_due(now)) schedule(std::max(*due, now + 1));
}

// The fronts due, and those whose clock stopped since (they go to the
// untimed list now; their place was all they kept). An ending connection
// leaves its list first, so the front is read again each time.
void LoopServer::end_due(Wait w, std::uint64_t now) {
  const auto wrapped_now = static_cast<std::uint32_t>(now);
  for (HttpConnection* c = list(w).head; c != nullptr; c = list(w).head) {
    if (!c->clock_on) {
      to_untimed(c);
    } else if (!earlier(wrapped_now, c->deadline)) {
      to_untimed(c);
      end(c, &HttpConnection::time_out);
    } else {
      break;
    }
  }
}

void LoopServer::nudge_idle(std::uint64_t now) {
  const std::uint64_t idle_ms = timeout_ms_[static_cast<std::size_t>(Wait::idle)];
  while (park_cursor_ != nullptr &&
         unwrap(park_cursor_->deadline, now) + tick_ms_ <= now + idle_ms) {
    HttpConnection* c = park_cursor_;
    park_cursor_ = c->wait_next;
    if (c->clock_on) c->nudge();
  }
}

// Collected first: an ending connection leaves the list being walked.
void LoopServer::check_send_rates() {
  const double now_s = get_running_loop().time();
  std::vector<HttpConnection*> slow;
  for (HttpConnection* c = list(Wait::send).head; c != nullptr; c = c->wait_next) {
    if (c->clock_on && c->sends_too_slowly(now_s)) slow.push_back(c);
  }
  for (HttpConnection* c : slow) {
    to_untimed(c);
    end(c, &HttpConnection::time_out);
  }
}

std::optional<std::uint64_t> LoopServer::next_due(std::uint64_t now) const noexcept {
  std::optional<std::uint64_t> due;
  auto consider = [&due](std::uint64_t t) { due = due ? std::min(*due, t) : t; };
  for (Wait w : {Wait::header, Wait::idle, Wait::body, Wait::send, Wait::linger}) {
    if (const HttpConnection* c = lists_[static_cast<std::size_t>(w)].head) {
      consider(unwrap(c->deadline, now));
    }
  }
  if (park_cursor_ != nullptr) {
    const std::uint64_t idle_ms = timeout_ms_[static_cast<std::size_t>(Wait::idle)];
    consider(unwrap(park_cursor_->deadline, now) + tick_ms_ - idle_ms);
  }
  if (shared_->options.min_send_rate > 0 &&
      lists_[static_cast<std::size_t>(Wait::send)].head != nullptr) {
    consider(now + tick_ms_);
  }
  return due;
}

}  // namespace corio::http::detail
