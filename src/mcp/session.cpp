// Session (see session.hpp): reading, dispatching and answering.
//
// run() reads one message at a time and never waits for a handler: a
// request becomes a task (kept in running_ by its id, so a cancellation
// can find it) and run() goes back to reading. Answers go out through
// send(), whose transport keeps each message whole.
#include <corio/mcp/session.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <vector>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/gather.hpp>
#include <corio/shield.hpp>
#include <corio/timeout.hpp>

#include "mcp/request_key.hpp"

namespace corio::mcp {

namespace {

json progress_token_of(const json& params) {
  if (!params.is_object()) return nullptr;
  const auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return nullptr;
  return meta->value("progressToken", json());
}

// An ill-formed response (a result without an id, an id of null): JSON-RPC
// answers no response, and answering one can loop with a peer that answers
// our error in turn (it did: 416 POSTs in 50 ms). Without a method, what has
// an id, a result or an error is taken for a response. Anything else that is
// no valid message is an invalid Request, answered -32600 (JSON-RPC 2.0
// section 5.1, and its examples: `{"foo": "boo"}`, `{"method": 1}` without
// an id). Our answer is itself a valid error response, which a peer never
// answers in turn.
bool never_answered(const json& j) {
  return j.is_object() && !j.contains("method") &&
         (j.contains("id") || j.contains("result") || j.contains("error"));
}

}  // namespace

Session::~Session() {
  if (alive_) *alive_ = false;
  // Only if run() was torn down without ending: the done-callbacks must not
  // outlive the session they refer to.
  for (auto& [id, r] : running_) {
    r.task.remove_done_callback(r.forget);
    r.task.cancel();
  }
}

void Session::on_request(std::string method, RequestHandler handler) {
  requests_[std::move(method)] = std::move(handler);
}

void Session::on_notification(std::string method, NotificationHandler handler) {
  notifications_[std::move(method)] = std::move(handler);
}

Coro<void> Session::send(const json& message, const json& related_request) {
  if (output_lost_) co_return;  // nobody reads any more: said once, in output_failed()
  // error_handler_t::replace: a handler's string with invalid UTF-8 must
  // not make the answer itself unsendable.
  std::exception_ptr failed;
  try {
    co_await transport_.send(message.dump(-1, ' ', false, json::error_handler_t::replace),
                             related_request);
  } catch (const CancelledError&) {
    throw;
  } catch (...) {
    failed = std::current_exception();
  }
  if (failed) output_failed(failed);
}

// The peer's side of the output is gone (EPIPE, a reset socket): one log
// line, and the reading stops, since every answer would be lost. Not an
// exception per request: those would each be "never retrieved".
void Session::output_failed(std::exception_ptr e) noexcept {
  if (output_lost_) return;
  output_lost_ = true;
  std::string why = "unknown error";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    why = x.what();
  } catch (...) {
  }
  std::fprintf(stderr, "corio mcp: the output is closed (%s); the session ends\n", why.c_str());
  if (reader_) reader_->cancel("the output is closed");
}

Coro<void> Session::notify(std::string_view method, json params, const json& related_request) {
  co_await send(make_notification(method, std::move(params)), related_request);
}

Coro<json> Session::request(std::string_view method, json params, const json& related_request) {
  const std::int64_t id = next_id_++;
  Future<json> answer = get_running_loop().create_future<json>();
  awaiting_.emplace(id, answer);
  struct Forget {
    Session& s;
    std::int64_t id;
    ~Forget() { s.awaiting_.erase(id); }
  } forget{*this, id};
  bool cancelled = false;
  try {
    // Cancelled while sending, the request may have reached the peer all
    // the same (a Streamable HTTP POST waits for its answer's head): it is
    // told below too, or its handler would wait on for good.
    co_await send(make_request(id, method, std::move(params)), related_request);
    // Lost with the output: no answer will come (run() may be over already).
    if (output_lost_) throw ConnectionClosedError("connection closed: the peer stopped reading");
    co_return co_await shield(answer);
  } catch (const CancelledError&) {
    cancelled = true;
  }
  // co_await cannot sit in a catch block: tell the peer here, then rethrow.
  if (cancelled) {
    const json params_out = {{"requestId", id}, {"reason", "cancelled by the caller"}};
    co_await shield(notify("notifications/cancelled", params_out, related_request));
    throw CancelledError();
  }
  co_return nullptr;
}

void Session::deliver(Message answer) {
  if (!answer.id.is_number_integer()) return;  // not one of ours
  const auto it = awaiting_.find(answer.id.get<std::int64_t>());
  if (it == awaiting_.end() || it->second.done()) return;  // unknown or abandoned: ignored
  if (answer.kind == Message::Kind::response) {
    it->second.set_result(std::move(answer.result));
  } else {
    const json& e = answer.error;
    it->second.set_exception(std::make_exception_ptr(
        RpcError(e.value("code", error_code::internal_error), e.value("message", std::string()),
                 e.value("data", json()))));
  }
}

void Session::fail_awaiting() noexcept {
  for (auto& [id, answer] : awaiting_) {
    if (!answer.done()) {
      answer.set_exception(std::make_exception_ptr(ConnectionClosedError()));
    }
  }
}

bool Session::cancel_request(const json& id) {
  const auto it = running_.find(detail::request_key(id));
  if (it == running_.end()) return false;
  const std::string& method = it->second.method;
  for (std::size_t at = 0; at < never_cancel_.size(); at = never_cancel_.find('\n', at) + 1) {
    if (never_cancel_.compare(at, method.size(), method) == 0 && never_cancel_[at + method.size()] == '\n') {
      return false;
    }
  }
  return it->second.task.cancel("cancelled by the client");
}

// A request at max_in_flight waits in dispatch() (take_request()), so the
// reading stops there; what is read before it is dispatched, answers too.
Coro<void> Session::read_all() {
  for (;;) {
    std::optional<Received> in = co_await transport_.receive();
    if (!in) break;
    co_await dispatch(*in);
  }
}

Coro<void> Session::handle(Received message) {
  if (!closed_) co_await dispatch(message);
}

Coro<void> Session::close() {
  closed_ = true;
  slot_free_.set();  // a request waiting for a slot gives up
  fail_awaiting();
  co_await cancel_running();
}

Coro<void> Session::run() {
  if (!alive_) alive_ = std::make_shared<bool>(true);
  const std::shared_ptr<bool> alive = alive_;
  idle_.set();
  // The reading runs as a task of its own so that output_failed() can stop
  // it without cancelling whoever awaits run().
  Task<void> reader = create_task(read_all());
  reader_ = reader;
  std::exception_ptr stopped;  // cancelled, or the transport failed
  try {
    co_await reader;
    reader_.reset();
    fail_awaiting();        // no answer can come any more
    co_await until_idle();  // the requests still running answer (cancellable too)
  } catch (...) {
    stopped = std::current_exception();
  }
  if (!*alive) {  // destroyed meanwhile: nothing of the session may be touched
    if (stopped) std::rethrow_exception(stopped);
    co_return;
  }
  reader_.reset();
  fail_awaiting();
  const bool cancelled_from_outside = current_task() && current_task()->cancelling() > 0;
  if (output_lost_ && !cancelled_from_outside) stopped = nullptr;
  if (stopped || output_lost_) {
    // The request tasks refer to this session: they end before run() does.
    co_await cancel_running();
    if (!output_lost_) co_await flush_briefly();
    if (stopped) std::rethrow_exception(stopped);
    co_return;
  }
  // The answers are written; at exit they must be out of the process too.
  co_await transport_.flush();
}

// Cancelled (Ctrl-C, a shutdown): what is already written should still
// reach the peer whole, as a process exit would cut it; but a peer that
// does not read must not hold the exit up for long.
Coro<void> Session::flush_briefly() {
  try {
    co_await wait_for(transport_.flush(), std::chrono::seconds(1));
  } catch (const TimeoutError&) {
    // The peer stopped reading: what is left is lost with the process.
  }
}

Coro<void> Session::cancel_running() {
  for (auto& [id, r] : running_) r.task.cancel();
  co_await until_idle();
}

Coro<void> Session::until_idle() {
  while (!running_.empty()) {
    idle_.clear();
    co_await idle_.wait();
  }
}

Coro<void> Session::dispatch(const Received& in) {
  json error;  // the answer to input that is no message (co_await cannot sit in a catch)
  json j;
  Message m;
  if (in.too_large) {
    error = make_error(nullptr, error_code::invalid_request, "message over the size limit");
  } else {
    try {
      j = mcp::parse_json(in.text, json_limits_);
      if (!j.is_array()) m = parse_message(j);
    } catch (const InvalidMessage& e) {
      if (!never_answered(j)) error = make_error(e.id(), e);
    } catch (const RpcError& e) {
      error = make_error(nullptr, e);
    }
  }
  if (!error.is_null()) {
    co_await send(error);
  } else if (j.is_array()) {
    co_await dispatch_batch(std::move(j));
  } else if (m.is_request()) {
    co_await take_request(std::move(m));
  } else if (m.is_notification()) {
    co_await answer(std::move(m));  // runs the handler; notifications get no answer
  } else {
    deliver(std::move(m));
  }
}

json Session::refusal(const Message& m) const {
  if (gate_) {
    try {
      gate_(m);
    } catch (const RpcError& e) {
      return make_error(m.id, e);
    }
  }
  return nullptr;
}

Coro<void> Session::take_request(Message m) {
  const std::string key = detail::request_key(m.id);
  json refused;
  if (!running_.contains(key)) {
    refused = refusal(m);  // judged in arrival order, before any wait
    while (refused.is_null() && running_.size() >= max_in_flight_ && !closed_) {
      slot_free_.clear();
      co_await slot_free_.wait();
    }
    if (closed_) co_return;
  }
  if (running_.contains(key)) {
    // Not routed by the id: that stream belongs to the request running.
    co_await send(make_error(m.id, error_code::invalid_request, "a request with this id is still running"));
  } else if (!refused.is_null()) {
    co_await send(refused, m.id);
    transport_.request_done(m.id);  // Streamable HTTP: its POST's stream ends
  } else {
    start_request(std::move(m));
  }
}

void Session::start_request(Message m) {
  std::string key = detail::request_key(m.id);
  std::string method = m.method;
  const json id = m.id;
  Task<void> task = create_task(serve_request(std::move(m)));
  // A done-callback, not a destructor in the coroutine: a task cancelled
  // before its first step (a request and its notifications/cancelled read
  // together) never runs its body, and would stay "running" for ever.
  const CallbackId cb = task.add_done_callback([this, key, id](Future<void>) { forget(key, id); });
  running_.emplace(std::move(key), Running{std::move(task), std::move(method), cb});
}

void Session::forget(const std::string& key, const json& id) noexcept {
  running_.erase(key);
  if (running_.empty()) idle_.set();
  if (running_.size() < max_in_flight_) slot_free_.set();
  transport_.request_done(id);
}

Coro<void> Session::serve_request(Message m) {
  const json id = m.id;
  json reply = co_await answer(std::move(m));
  if (reply.is_null()) co_return;
  co_await send(reply, id);
  transport_.request_answered(id);
}

Coro<json> Session::answer(Message m) {
  if (m.is_notification()) {
    if (const auto h = notifications_.find(m.method); h != notifications_.end()) {
      h->second(m.params);
    } else if (other_notifications_) {
      other_notifications_(m.method, m.params);
    }
    co_return nullptr;
  }
  const auto h = requests_.find(m.method);
  if (h == requests_.end() && !other_requests_) {
    co_return make_error(m.id, error_code::method_not_found, "Method not found: " + m.method);
  }
  const RequestContext ctx{m.id, progress_token_of(m.params), *this};
  try {
    // Not co_await on a ?: of calls: g++ 12 called the empty std::function.
    Coro<json> served = h != requests_.end() ? h->second(m.params, ctx) : other_requests_(m.method, m.params, ctx);
    json result = co_await std::move(served);
    co_return make_response(m.id, std::move(result));
  } catch (const RpcError& e) {
    co_return make_error(m.id, e);
  } catch (const json::exception&) {
    // The JSON library's words are about our code, not the peer's request.
    co_return make_error(m.id, error_code::internal_error, "Internal error");
  } catch (const std::exception& e) {
    co_return make_error(m.id, error_code::internal_error, e.what());
  }
}

Coro<void> Session::dispatch_batch(json batch) {
  if (!accept_batches_ || batch.empty()) {
    co_await send(make_error(nullptr, error_code::invalid_request,
                             batch.empty() ? "an empty batch" : "batches are not supported"));
    co_return;
  }
  // JSON-RPC: the requests of a batch may run in any order; the answers
  // (none for notifications) go back together in one array.
  std::vector<Message> messages;
  json replies = json::array();
  for (json& item : batch) {
    try {
      Message m = parse_message(item);
      if (json refused = m.is_request() ? refusal(m) : json(); !refused.is_null()) {
        replies.push_back(std::move(refused));
      } else {
        messages.push_back(std::move(m));
      }
    } catch (const InvalidMessage& e) {
      if (!never_answered(item)) replies.push_back(make_error(e.id(), e));
    }
  }
  // At most max_in_flight at once, as run() bounds single requests: a
  // 4 MiB batch holds 100,000 pings, which would otherwise all be running.
  for (std::size_t at = 0; at < messages.size(); at += max_in_flight_) {
    std::vector<Coro<json>> answers;
    for (std::size_t i = at; i < std::min(messages.size(), at + max_in_flight_); ++i) {
      answers.push_back(answer(std::move(messages[i])));
    }
    for (auto& outcome : co_await gather(return_exceptions, std::move(answers))) {
      if (outcome.has_value() && !outcome.value().is_null()) replies.push_back(std::move(outcome.value()));
    }
  }
  if (!replies.empty()) co_await send(replies);
}

}  // namespace corio::mcp
