// Server, LoopServer and the middleware chain (see server.hpp and
// server_connection.hpp).
//
// Timeouts: one sweeper per loop (sweeper.cpp).
#include <algorithm>
#include <csignal>

#include <fmt/core.h>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/streams.hpp>
#include <corio/timeout.hpp>

#include "http/server/server_connection.hpp"
#include "http/server/server_errors.hpp"
#include "http/server/server_workers.hpp"

namespace corio::http {

namespace detail {

namespace {

// Kept between requests: enough for the requests a loop has in progress
// at once in a busy moment; past that a state is freed, so that a burst
// does not pin its peak.
constexpr std::size_t kSpareRequestStates = 64;
// A batch or a field list grown past these is not kept.
constexpr std::size_t kKeepBatch = 16 * 1024;
constexpr std::size_t kKeepFields = 64;

// The sweeper's tick: a quarter of the shortest timeout (sweeper.cpp).
std::uint64_t sweeper_tick_ms(const ServerOptions& opts) {
  const auto rate_window = opts.min_send_rate > 0 ? opts.min_send_rate_window : opts.send_timeout;
  const auto shortest = std::min({opts.header_timeout, opts.idle_timeout, opts.body_timeout,
                                  opts.send_timeout, opts.lingering_timeout, rate_window});
  const auto tick = std::clamp(shortest / 4, std::chrono::milliseconds(10),
                               std::chrono::milliseconds(1000));
  return static_cast<std::uint64_t>(tick.count());
}

// What Response() is. Capacity does not count: respond() made it anew.
// The binding names every field, so a field added to Response stops this
// from compiling rather than leaking from one request to the next.
bool is_empty(const Response& r) noexcept {
  const auto& [status, headers, body, file_path, producer] = r;
  return status == 200 && headers.empty() && body.empty() && file_path.empty() && !producer;
}

}  // namespace

LoopServer::LoopServer(std::shared_ptr<const ServerShared> shared)
    : shared_(std::move(shared)),
      timeout_ms_(timeouts_ms(shared_->options)),
      tick_ms_(sweeper_tick_ms(shared_->options)),
      date_(shared_->options.server_name) {
  drained_.set();
  spare_.reserve(kSpareRequestStates);
}

// Only parked connections can be left (a task serving one holds us), and
// no task will end them.
LoopServer::~LoopServer() {
  if (sweeper_) sweeper_->cancel();
  for (HttpConnection* c : all()) {
    if (c->parked()) end(c, &HttpConnection::abort);
  }
  end_adopted(false);
}

Coro<void> LoopServer::start(std::string host, std::uint16_t port, bool reuse_port) {
  const ServerOptions& opts = shared_->options;
  corio::ServerOptions net;
  net.reuse_port = reuse_port;
  net.backlog = opts.backlog;
  net.ssl = opts.ssl;
  net.ssl_handshake_timeout = opts.tls_handshake_timeout;
  net.max_connections = opts.max_connections;
  std::weak_ptr<LoopServer> weak = weak_from_this();
  corio::detail::ClientAdopted adopt = [weak](StreamReader r, StreamWriter w,
                                              corio::detail::ServerSlot slot) {
    HttpConnection::start(weak.lock(), std::move(r), std::move(w), std::move(slot));
  };
  listener_ =
      co_await corio::detail::start_adopting_server(adopt, std::move(host), port, std::move(net));
  port_ = listener_.port();
}

Coro<void> LoopServer::wait_stopped() { co_await stopped_.wait(); }

void LoopServer::end(HttpConnection* c, void (HttpConnection::*how)() noexcept) noexcept {
  const bool parked = c->parked();
  if (parked) c->unpark();
  (c->*how)();
  if (parked) delete c;
}

std::unique_ptr<RequestState> LoopServer::take_request_state() {
  if (spare_.empty()) return std::make_unique<RequestState>(shared_->options.limits);
  std::unique_ptr<RequestState> state = std::move(spare_.back());
  spare_.pop_back();
  return state;
}

void LoopServer::give_back(std::unique_ptr<RequestState> state) noexcept {
  if (spare_.size() >= kSpareRequestStates || state->out.capacity() > kKeepBatch ||
      state->head->headers.size() > kKeepFields) {
    return;  // freed
  }
  state->head->headers.clear();  // the fields' own strings go now
  state->body.reset();
  // Set when a request ended early; respond() empties it, and the test
  // costs less than the construction, move and destruction it skips.
  if (!is_empty(state->resp)) state->resp = Response();
  state->out.clear();
  state->handed = state->window_mark = 0;  // the send-rate window starts again
  state->window_waited = state->wait_began = 0;
  spare_.push_back(std::move(state));  // no allocation: reserved in the constructor
}

void LoopServer::close() {
  stopping_ = true;
  if (listener_.is_serving()) listener_.close();
  for (HttpConnection* c : all()) end(c, &HttpConnection::abort);
  end_adopted(false);
  stopped_.set();
}

Coro<void> LoopServer::shutdown(std::chrono::milliseconds deadline) {
  stopping_ = true;
  if (listener_.is_serving()) listener_.close();
  for (HttpConnection* c : all()) {
    if (c->idle) end(c, &HttpConnection::close);
  }
  end_adopted(true);
  try {
    co_await corio::wait_for(drained_.wait(), deadline);
  } catch (const TimeoutError&) {
    // Past the deadline: what is still running is cancelled below.
  }
  for (HttpConnection* c : all()) {
    TaskRef task = c->task;  // none if parked; then c goes with end()
    end(c, &HttpConnection::abort);
    if (task.task() != nullptr) task.cancel("server shutdown");
  }
  end_adopted(false);
  co_await drained_.wait();
  stopped_.set();
}

}  // namespace detail

Coro<Response> Next::operator()(Request& req) const {
  const std::vector<Middleware>& chain = shared_->middleware;
  if (index_ == chain.size()) return detail::call_handler(*shared_, *handler_, req);
  return chain[index_](req, Next(*shared_, index_ + 1, *handler_));
}

void log_to_stderr(const AccessLogEntry& e) {
  fmt::print(stderr, "{} \"{} {}\" {} {} {:.3f}ms\n", e.remote, e.method, e.target, e.status,
             e.bytes, static_cast<double>(e.duration.count()) / 1000.0);
}

Server::Server(ServerOptions options) : shared_(std::make_shared<detail::ServerShared>()) {
  if (options.workers < 1) throw ValueError("ServerOptions::workers must be at least 1");
  shared_->options = std::move(options);
}

const ServerOptions& Server::options() const noexcept { return shared_->options; }

Server::~Server() {
  if (workers_) workers_->stop_now();
  if (main_) main_->close();
}

void Server::route(std::string method, std::string_view pattern, Handler handler) {
  if (main_) throw RuntimeError("add routes before Server::start()");
  shared_->router.add(std::move(method), pattern, std::move(handler));
}

void Server::use(Middleware middleware) {
  if (main_) throw RuntimeError("add middleware before Server::start()");
  shared_->middleware.push_back(std::move(middleware));
}

void Server::on_error(ErrorHandler handler) {
  if (main_) throw RuntimeError("set the error hook before Server::start()");
  shared_->on_error = std::move(handler);
}

Coro<void> Server::start(std::string host, std::uint16_t port) {
  if (main_) throw RuntimeError("Server::start() called twice");
  // Once, before any loop's connections use the context (its copies share it).
  if (shared_->options.ssl && shared_->options.http2) {
    shared_->options.ssl->set_alpn_protocols({"h2", "http/1.1"});
  }
  const ServerOptions& opts = shared_->options;
  const bool reuse_port = opts.reuse_port || opts.workers > 1;
  std::shared_ptr<detail::LoopServer> main = std::make_shared<detail::LoopServer>(shared_);
  co_await main->start(host, port, reuse_port);
  main_ = main;
  if (opts.workers > 1) {
    workers_ = std::make_unique<detail::Workers>(shared_, host, main->port(), opts.workers - 1);
    co_await workers_->start();
  }
}

std::uint16_t Server::port() const noexcept { return main_ ? main_->port() : 0; }

Coro<void> Server::serve_forever() {
  if (!main_) throw RuntimeError("Server::serve_forever() before start()");
  try {
    co_await main_->wait_stopped();
  } catch (const CancelledError&) {
    close();
    throw;
  }
}

void Server::close() {
  if (workers_) workers_->stop_now();
  if (main_) main_->close();
}

Coro<void> Server::shutdown(std::chrono::milliseconds deadline) {
  if (!main_) co_return;
  if (workers_) workers_->begin_shutdown(deadline);
  co_await main_->shutdown(deadline);
  if (workers_) co_await workers_->join();
}

Coro<void> run_until_signal(Server& server, std::chrono::milliseconds deadline) {
  EventLoop& loop = get_running_loop();
  Event signalled;
  loop.add_signal_handler(SIGINT, [&signalled] { signalled.set(); });
  loop.add_signal_handler(SIGTERM, [&signalled] { signalled.set(); });
  struct Remove {
    EventLoop& loop;
    ~Remove() {
      loop.remove_signal_handler(SIGINT);
      loop.remove_signal_handler(SIGTERM);
    }
  } remove{loop};
  co_await signalled.wait();
  co_await server.shutdown(deadline);
}

}  // namespace corio::http
