// StreamableHttp (see streamable_http.hpp): the endpoint's three handlers,
// the sessions they create and find, and the sweep that ends idle ones.
//
// Lifetimes: the mounted handlers share the Impl (a route may outlive the
// StreamableHttp object), the sweep timer holds it weakly, and each session
// is shared by the endpoint's map, the POSTs being handled, its open
// streams and, once ended with requests still running, the task that
// waits for them to end, so a stream or a request still running after
// DELETE (or after the endpoint is gone) touches nothing freed. An idle
// session is that object alone: no task waits for its next message, each
// POST hands its message in.
#include <corio/mcp/streamable_http.hpp>

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <string_view>

#include <corio/detail/entropy.hpp>
#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/sleep.hpp>
#include <corio/timeout.hpp>

#include "mcp/http_session.hpp"
#include "mcp/sse_events.hpp"

namespace corio::mcp {

using detail::HttpSession;
using detail::Outbox;
using http::Request;
using http::Response;

namespace {

// How many turns of the loop a POST waits for its answer, to send it as
// JSON (quick_answer()), or else for the first events, to send them with
// the priming event in one write.
constexpr int kPrimingTurns = 4;
// Events written together at most (bytes, roughly): a batch is one write.
constexpr std::size_t kMaxBatch = 64 * 1024;

// The TypeScript SDK's codes for errors of the transport itself.
constexpr int kTransportError = -32000;
constexpr int kSessionNotFound = -32001;

// A request the transport turns away: its HTTP status, and the JSON-RPC
// error the body carries (as the SDK's server answers).
class Refusal : public std::runtime_error {
 public:
  Refusal(int status, int code, const std::string& message)
      : std::runtime_error(message), status_(status), code_(code) {}
  Response response() const { return Response::json(make_error(nullptr, code_, what()), status_); }

 private:
  int status_;
  int code_;
};

// 128 bits from the kernel's CSPRNG, in hex: a session id must not be
// guessable, since it is all that ties a request to its session.
void new_session_id(char (&out)[HttpSession::kIdLength]) {
  unsigned char bytes[HttpSession::kIdLength / 2];
  std::size_t got = corio::detail::seeded_secret(bytes, sizeof bytes) ? sizeof bytes : 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "getrandom");
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < sizeof bytes; ++i) {
    out[2 * i] = kHex[bytes[i] >> 4];
    out[2 * i + 1] = kHex[bytes[i] & 15];
  }
}

// "http://localhost:5173" -> "localhost"; "" when it is no origin.
std::string_view origin_host(std::string_view origin) {
  const std::size_t scheme = origin.find("://");
  if (scheme == std::string_view::npos) return {};
  std::string_view host = origin.substr(scheme + 3);
  if (host.starts_with('[')) return host.substr(0, host.find(']') + 1);
  return host.substr(0, host.find(':'));
}

bool accepts(const Request& req, std::string_view type) {
  const std::string_view accept = req.headers().get_or("Accept", "");
  return accept.find(type) != std::string_view::npos || accept.find("*/*") != std::string_view::npos;
}

// Only clients of 2025-11-25 and later get a priming event: older ones may
// take its empty data for a message.
std::string priming_event(const HttpSession& session, const Outbox& box, std::chrono::milliseconds retry) {
  return session.priming ? detail::sse_priming_event(box.stream_id, retry) : std::string();
}

bool is_loopback_name(std::string_view host) {
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]";
}

// "localhost:8000" -> "localhost", "[::1]:80" -> "[::1]".
std::string_view host_name(std::string_view host) {
  if (host.starts_with('[')) return host.substr(0, host.find(']') + 1);
  return host.substr(0, host.find(':'));
}

}  // namespace

struct StreamableHttp::Impl : std::enable_shared_from_this<Impl> {
  Impl(Server& s, StreamableHttpOptions o) : server(s), opts(std::move(o)) {}

  Server& server;
  StreamableHttpOptions opts;
  // Keyed by a view of the session's own id: one copy of it per session.
  std::map<std::string_view, std::shared_ptr<HttpSession>> sessions;
  TimerHandle sweep_timer;
  bool sweep_armed = false;

  void check_origin(const Request& req) const;
  void check_host(const Request& req) const;
  std::shared_ptr<HttpSession> find_session(const Request& req) const;
  std::shared_ptr<HttpSession> start_session();
  void end_session(std::string_view id) noexcept;
  bool evict_least_recently_used();
  void arm_sweep();
  void sweep();

  using Method = Coro<Response> (Impl::*)(Request&);
  static Coro<Response> guarded(std::shared_ptr<Impl> impl, Method method, Request& req);
  Coro<Response> post(Request& req);
  Coro<Response> get(Request& req);
  Coro<Response> del(Request& req);
  Coro<Response> answer_request(std::shared_ptr<HttpSession> session, const json& id,
                                std::string body);
  Coro<Response> answer_as_json(std::shared_ptr<HttpSession> session, std::shared_ptr<Outbox> box);
  static Coro<std::optional<Response>> quick_answer(Outbox& box);
};

void StreamableHttp::Impl::check_origin(const Request& req) const {
  const std::optional<std::string_view> origin = req.headers().get("Origin");
  if (origin && !is_loopback_name(origin_host(*origin)) &&
      std::find(opts.allowed_origins.begin(), opts.allowed_origins.end(), *origin) ==
          opts.allowed_origins.end()) {
    throw Refusal(403, kTransportError, "Forbidden: Origin not allowed");
  }
  check_host(req);
}

// DNS rebinding without an Origin (a page's fetch() to a name that now
// resolves to 127.0.0.1 still says that name in Host).
void StreamableHttp::Impl::check_host(const Request& req) const {
  const auto& allowed = opts.allowed_hosts;
  if (std::find(allowed.begin(), allowed.end(), "*") != allowed.end()) return;
  const std::string_view host = req.headers().get_or("Host", "");
  const std::string_view name = host_name(host);
  if (is_loopback_name(name) || std::find(allowed.begin(), allowed.end(), host) != allowed.end() ||
      std::find(allowed.begin(), allowed.end(), name) != allowed.end()) {
    return;
  }
  throw Refusal(403, kTransportError, "Forbidden: Host not allowed");
}

// The session a request names; its status otherwise (400 without the
// header, 404 for one that is gone, 400 for a revision we do not speak).
std::shared_ptr<HttpSession> StreamableHttp::Impl::find_session(const Request& req) const {
  const std::optional<std::string_view> id = req.headers().get("Mcp-Session-Id");
  if (!id) throw Refusal(400, kTransportError, "Bad Request: Mcp-Session-Id header is required");
  const auto it = sessions.find(*id);
  if (it == sessions.end()) throw Refusal(404, kSessionNotFound, "Session not found");
  const std::optional<std::string_view> version = req.headers().get("MCP-Protocol-Version");
  if (version && !Server::supports_protocol_version(*version)) {
    throw Refusal(400, kTransportError,
                  "Bad Request: unsupported MCP-Protocol-Version " + std::string(*version));
  }
  it->second->last_used = get_running_loop().time();
  return it->second;
}

// A session ended while its requests run lives until they have ended.
Coro<void> close_session(std::shared_ptr<HttpSession> session) { co_await session->client.close(); }

std::shared_ptr<HttpSession> StreamableHttp::Impl::start_session() {
  if (sessions.size() >= opts.max_sessions && !evict_least_recently_used()) {
    throw Refusal(503, kTransportError, "Service Unavailable: too many sessions");
  }
  auto session = std::make_shared<HttpSession>(server);
  new_session_id(session->id_chars);
  session->last_used = get_running_loop().time();
  sessions.emplace(session->id(), session);
  arm_sweep();
  return session;
}

// Clients rarely DELETE their sessions (the SDK's close() does not): at the
// bound, the session unused longest makes room, unless every session has a
// stream open. Its client gets 404 next time and starts a new one.
bool StreamableHttp::Impl::evict_least_recently_used() {
  const HttpSession* oldest = nullptr;
  for (const auto& [id, s] : sessions) {
    if (!s->transport.busy() && (!oldest || s->last_used < oldest->last_used)) oldest = s.get();
  }
  if (oldest) end_session(oldest->id());
  return oldest != nullptr;
}

void StreamableHttp::Impl::end_session(std::string_view id) noexcept {
  const auto it = sessions.find(id);
  if (it == sessions.end()) return;
  std::shared_ptr<HttpSession> session = std::move(it->second);
  sessions.erase(it);
  session->transport.close();  // its streams end now
  // And its requests are cancelled: by a task that keeps the session until
  // they have ended. An idle one (the usual end) goes here and now, and so
  // does one ended with no loop running (a teardown): its requests' tasks
  // went with their loop, and create_task would throw here.
  EventLoop* loop = corio::detail::tls_running_loop;
  if (loop && !session->client.idle()) loop->create_task(close_session(std::move(session)));
}

void StreamableHttp::Impl::arm_sweep() {
  if (sweep_armed || sessions.empty()) return;
  sweep_armed = true;
  // Half the timeout: an idle session ends between 1x and 1.5x of it.
  const auto period = std::max(opts.session_idle_timeout / 2, std::chrono::milliseconds(10));
  std::weak_ptr<Impl> self = weak_from_this();
  sweep_timer = get_running_loop().call_later(period, [self] {
    if (const std::shared_ptr<Impl> impl = self.lock()) impl->sweep();
  });
}

void StreamableHttp::Impl::sweep() {
  sweep_armed = false;
  const double limit = std::chrono::duration<double>(opts.session_idle_timeout).count();
  const double now = get_running_loop().time();
  std::vector<std::string> idle;
  for (const auto& [id, s] : sessions) {
    if (!s->transport.busy() && now - s->last_used >= limit) idle.emplace_back(id);
  }
  for (const std::string& id : idle) end_session(id);
  arm_sweep();
}

// Writes box's events from event from on, as this stream's writer, until
// the box is done, another writer takes over (a resumption), or
// close_stream() ends it after what came so far. keepalive > 0: a comment after that long without an
// event, so that a client gone away is noticed (the write fails) on a
// stream that may stay quiet for hours. A client gone away leaves the
// events to a later resumption.
Coro<void> stream_events(std::shared_ptr<Outbox> box, http::StreamResponseWriter& w,
                         std::chrono::milliseconds keepalive, std::uint64_t from, bool resumption,
                         std::string priming = {}) {
  const std::uint64_t me = box->attach(from, resumption);
  struct Detach {
    Outbox& box;
    std::uint64_t me;
    ~Detach() { box.detach(me); }
  } detach{*box, me};
  // The priming event goes out with the events there are (a POST's
  // stream opens after quick_answer() waited for them).
  std::string out = std::move(priming);
  for (;;) {
    while (box->writes(me) && out.size() < kMaxBatch) {
      const auto [n, message] = box->take();
      detail::append_sse_event(out, box->stream_id, n, message);
    }
    if (!out.empty()) {
      co_await w.write(out);
      out.clear();
      continue;
    }
    if (box->through(me)) co_return;
    box->ready.clear();
    if (keepalive.count() == 0) {
      co_await box->ready.wait();
      continue;
    }
    bool quiet = false;
    try {
      co_await wait_for(box->ready.wait(), keepalive);
    } catch (const TimeoutError&) {
      quiet = true;
    }
    if (quiet) co_await w.write(": keep-alive\n\n");
  }
}

Response event_stream(http::Response::Producer producer) {
  Response resp = Response::stream(std::move(producer), 200, "text/event-stream");
  resp.headers.set("Cache-Control", "no-cache");
  return resp;
}

Coro<Response> StreamableHttp::Impl::post(Request& req) {
  check_origin(req);
  if (!accepts(req, "application/json") || !accepts(req, "text/event-stream")) {
    throw Refusal(406, kTransportError,
                  "Not Acceptable: the client must accept both application/json and text/event-stream");
  }
  const std::string_view type = req.headers().get_or("Content-Type", "");
  if (!http::iequals(type.substr(0, type.find(';')), "application/json")) {
    throw Refusal(415, kTransportError, "Unsupported Media Type: Content-Type must be application/json");
  }
  std::string body = co_await req.read();
  if (body.size() > opts.max_message) {
    throw Refusal(413, error_code::invalid_request, "message over the size limit");
  }
  Message m;
  try {
    const json j = mcp::parse_json(body, server.json_limits);
    if (j.is_array()) throw InvalidMessage(nullptr, "batches are not supported on Streamable HTTP");
    m = parse_message(j);
  } catch (const InvalidMessage& e) {
    throw Refusal(400, e.code(), e.what());
  }  // a parse error (RpcError) is -32700 by the guard
  const bool initialize = m.is_request() && m.method == "initialize";
  if (initialize && req.headers().contains("Mcp-Session-Id")) {
    throw Refusal(400, error_code::invalid_request, "Bad Request: initialize cannot name a session");
  }
  std::shared_ptr<HttpSession> session = initialize ? start_session() : find_session(req);
  if (initialize) {
    const json& asked = m.params.is_object() ? m.params.value("protocolVersion", json()) : json();
    // Priming events are for clients of 2025-11-25 and later.
    session->priming =
        Server::negotiate_protocol_version(asked.is_string() ? asked.get<std::string>() : std::string()) >=
        "2025-11-25";
  }
  if (!m.is_request()) {
    Received in{std::move(body)};  // named: g++ 12 frees a temporary in a co_await twice
    co_await session->client.handle(std::move(in));
    co_return Response(202);
  }
  Response resp = co_await answer_request(session, m.id, std::move(body));
  if (initialize) resp.headers.set("Mcp-Session-Id", std::string(session->id()));
  co_return resp;
}

Coro<Response> StreamableHttp::Impl::answer_request(std::shared_ptr<HttpSession> session,
                                                    const json& id, std::string body) {
  std::shared_ptr<Outbox> box = session->transport.open_request(id);
  if (!box) throw Refusal(400, error_code::invalid_request, "a request with this id is still running");
  box->keep_last_only = opts.json_response;
  Received in{std::move(body)};  // named: g++ 12 frees a temporary in a co_await twice
  try {
    co_await session->client.handle(std::move(in));  // waits while max_in_flight run
  } catch (...) {
    session->transport.request_done(id);  // given up (cancelled): no request runs for the box
    throw;
  }
  if (opts.json_response) co_return co_await answer_as_json(std::move(session), std::move(box));
  if (opts.quick_answers_as_json) {
    if (std::optional<Response> quick = co_await quick_answer(*box)) co_return std::move(*quick);
  }
  box->priming = priming_event(*session, *box, opts.retry);
  // Only the box captured: a capture that fits std::function's own buffer
  // costs no allocation on every call's path.
  auto events = [box](http::StreamResponseWriter& w) {
    return stream_events(box, w, std::chrono::milliseconds(0), box->cursor, false, std::move(box->priming));
  };
  co_return event_stream(events);
}

// A request whose answer comes within a few turns of the loop, as its only
// message, gets it as a JSON body (the spec lets the server choose; the
// POST accepts both): no stream, no priming event, no event ids, nothing
// kept for a resumption. (Measured on bench/mcp over HTTP, 16 calls in
// flight: 13.5 us of server CPU per call, against 21.4 on a stream with
// its priming event and 20.1 before streams were resumable.) Anything else, or
// nothing yet, is streamed: a slow call's stream opens with its priming
// event, so the client can resume it.
Coro<std::optional<Response>> StreamableHttp::Impl::quick_answer(Outbox& box) {
  // Until the stream's writer attaches (its producer starts as soon as the
  // handler returns), request_done() keeps nothing and senders wait for room.
  box.answering = true;
  struct Chosen {
    Outbox& box;
    bool streamed = false;
    ~Chosen() {
      if (!streamed) box.stop_answering();
    }
  } chosen{box};
  for (int turn = 0; turn < kPrimingTurns && !box.answered && box.unwritten() == 0 && !box.done; ++turn) {
    co_await sleep(std::chrono::seconds(0));
  }
  // One event ever, the answer, and the stream not closed before it.
  if (box.answered && box.next == 2 && box.writer_end == UINT64_MAX) {
    box.keep_last_only = true;  // answered: request_done() keeps nothing
    co_return Response::text(std::move(box.events.front()), 200, "application/json");
  }
  chosen.streamed = true;
  co_return std::nullopt;
}

// The answer is the request's last message (the notifications before it
// have no place in a JSON body). None: the request was cancelled (202, as
// for a message that gets no answer) or its session ended (404).
Coro<Response> StreamableHttp::Impl::answer_as_json(std::shared_ptr<HttpSession> session,
                                                    std::shared_ptr<Outbox> box) {
  while (!box->done) {
    box->ready.clear();
    co_await box->ready.wait();
  }
  if (!box->events.empty()) co_return Response::text(box->events.back(), 200, "application/json");
  if (!sessions.contains(session->id())) throw Refusal(404, kSessionNotFound, "Session not found");
  co_return Response(202);
}

Coro<Response> StreamableHttp::Impl::get(Request& req) {
  check_origin(req);
  if (!accepts(req, "text/event-stream")) {
    throw Refusal(406, kTransportError, "Not Acceptable: the client must accept text/event-stream");
  }
  std::shared_ptr<HttpSession> session = find_session(req);
  const std::chrono::milliseconds keepalive = opts.keepalive_interval;
  // A resumption (SEP-1699): the stream that id is of, from the event after it.
  if (const std::optional<std::string_view> last = req.headers().get("Last-Event-ID")) {
    auto resumed = session->transport.resume(*last);
    if (!resumed) throw Refusal(400, kTransportError, "Bad Request: no stream to resume from " + std::string(*last));
    // A request's stream ends with its answer, the GET stream with the session.
    auto events = [session, box = resumed->first, from = resumed->second, keepalive](
                      http::StreamResponseWriter& w) { return stream_events(box, w, keepalive, from, true); };
    co_return event_stream(events);
  }
  std::shared_ptr<Outbox> box = session->transport.open_standalone();
  if (!box) throw Refusal(409, kTransportError, "Conflict: only one SSE stream is allowed per session");
  box->priming = priming_event(*session, *box, opts.retry);
  auto events = [session, box, keepalive](http::StreamResponseWriter& w) {
    return stream_events(box, w, keepalive, box->cursor, false, std::move(box->priming));
  };
  co_return event_stream(events);
}

Coro<Response> StreamableHttp::Impl::del(Request& req) {
  check_origin(req);
  const std::shared_ptr<HttpSession> session = find_session(req);
  end_session(session->id());
  co_return Response(200);
}

// A handler's refusal, or input that is not JSON, as the status and a
// JSON-RPC error body (co_await cannot sit in a catch block).
Coro<Response> StreamableHttp::Impl::guarded(std::shared_ptr<Impl> impl, Method method, Request& req) {
  std::optional<Response> refused;
  try {
    co_return co_await ((*impl).*method)(req);
  } catch (const Refusal& r) {
    refused = r.response();
  } catch (const RpcError& e) {
    refused = Response::json(make_error(nullptr, e), 400);
  }
  co_return std::move(*refused);
}

StreamableHttp::StreamableHttp(Server& server, StreamableHttpOptions options)
    : impl_(std::make_shared<Impl>(server, std::move(options))) {}

StreamableHttp::~StreamableHttp() { close_sessions(); }

void StreamableHttp::mount(http::Server& http) {
  if (http.options().workers != 1) {
    throw ValueError("StreamableHttp needs an http::Server with one loop (workers == 1)");
  }
  const std::shared_ptr<Impl> impl = impl_;
  const std::string& path = impl->opts.path;
  http.post(path, [impl](Request& req) { return Impl::guarded(impl, &Impl::post, req); });
  http.get(path, [impl](Request& req) { return Impl::guarded(impl, &Impl::get, req); });
  http.del(path, [impl](Request& req) { return Impl::guarded(impl, &Impl::del, req); });
}

std::size_t StreamableHttp::session_count() const noexcept { return impl_->sessions.size(); }

void StreamableHttp::close_sessions() noexcept {
  while (!impl_->sessions.empty()) impl_->end_session(std::string(impl_->sessions.begin()->first));
  impl_->sweep_timer.cancel();
  impl_->sweep_armed = false;
}

Coro<void> serve_streamable_http(Server& server, std::string host, std::uint16_t port,
                                 StreamableHttpOptions options, http::ServerOptions http_options) {
  http::Server http(std::move(http_options));
  // Bound beyond loopback, the names it is reached by are not known here.
  const bool loopback = host == "127.0.0.1" || host == "::1" || host == "localhost";
  if (!loopback && options.allowed_hosts.empty()) options.allowed_hosts.push_back("*");
  StreamableHttp endpoint(server, std::move(options));
  endpoint.mount(http);
  co_await http.start(std::move(host), port);
  co_await http.serve_forever();  // cancelled: closes, then the endpoint ends its sessions
}

}  // namespace corio::mcp
