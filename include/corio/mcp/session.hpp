/// \file
/// corio::mcp::Session: one JSON-RPC 2.0 peer over a Transport, the engine
/// under the MCP server.
///
/// <!-- doc: body (corio::mcp::Transport& transport) -->
///     using corio::mcp::json;
///     corio::mcp::Session s(transport);
///     s.on_request("ping", [](const json&, const corio::mcp::RequestContext&) -> corio::Coro<json> {
///       co_return json::object();
///     });
///     co_await s.run();   // until the peer closes its side
///
/// Each request runs as its own task, so a slow one does not hold up the
/// others (two slow tool calls overlap), and cancel_request() (MCP's
/// notifications/cancelled) cancels exactly that task; a cancelled request
/// gets no answer, as MCP asks. Notifications run inline, in arrival order.
///
/// Malformed input is answered as JSON-RPC 2.0 says (ill-formed answers
/// excepted, below) and the session goes on: not JSON
/// (trailing bytes and NULs included) or JSON nested deeper than the limit
/// (json_limits()) is a parse error (-32700, id null); JSON that is no
/// message (`{}`, a notification with params 5), a message over the
/// transport's size limit, or a request with
/// the id of one still running, an invalid request (-32600, with the id
/// when it could be read, else null); an unknown method -32601; a handler's RpcError
/// its own code; any other exception -32603 with its what(), except the
/// JSON library's, which are "Internal error" (their text is about our
/// code, not the peer's request). A notification for no
/// known method and an answer to no request of ours are ignored, and so
/// are ill-formed answers (no method, and an id, a result or an error: a
/// result without an id, an id of null): a response is never
/// answered, else two peers could answer each other's errors for ever. Batches
/// (JSON arrays) are answered with one -32600 unless accept_batches(true)
/// (MCP 2025-03-26 has them, 2025-06-18 and later do not); an accepted
/// batch runs its requests concurrently, max_in_flight() at a time, and
/// answers them in one array
/// (none if it held only notifications and answers), an empty one with a
/// single -32600.
///
/// The other direction too: request() sends a request of ours and waits for
/// the peer's answer (an MCP client's calls, a server's sampling requests).
///
/// Suspends: run() while waiting for messages and, at EOF, for the requests
/// still running; handle() while a request waits for a slot; request() until
/// its answer comes. Resumed by: the
/// transport (the loop), the request tasks, run() delivering an answer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <corio/coro.hpp>
#include <corio/event.hpp>
#include <corio/future.hpp>
#include <corio/mcp/jsonrpc.hpp>
#include <corio/mcp/transport.hpp>
#include <corio/task.hpp>

namespace corio::mcp {

class Session;

/// What a request handler knows about the request it serves.
struct RequestContext {
  json id;  ///< the request's id
  json progress_token;  ///< params._meta.progressToken, null when the client sent none
  Session& session;  ///< the session it came on (for requests and notifications to the peer)
};

/// One side of a JSON-RPC session over a Transport: the peer's requests
/// served by handlers, each in a task of its own, and requests and
/// notifications of its own sent to the peer.
class Session {
 public:
  /// Serves a request: its result; an RpcError thrown is the error answer
  /// (any other exception: internal_error).
  using RequestHandler = std::function<Coro<json>(const json& params, const RequestContext& ctx)>;
  /// Handles a notification (which gets no answer).
  using NotificationHandler = std::function<void(const json& params)>;
  /// Serves a request for a method no on_request() handler is for, as a
  /// RequestHandler does; RpcError(method_not_found) when it has none.
  using RequestRouter =
      std::function<Coro<json>(const std::string& method, const json& params, const RequestContext& ctx)>;
  /// Handles a notification no on_notification() handler is for.
  using NotificationRouter = std::function<void(const std::string& method, const json& params)>;

  /// A session over transport, which must outlive it; run() reads.
  explicit Session(Transport& transport) : transport_(transport) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();  ///< cancels the requests still running

  /// Serves the peer's requests for method.
  void on_request(std::string method, RequestHandler handler);
  /// Handles the peer's notifications of method.
  void on_notification(std::string method, NotificationHandler handler);
  /// Serves the requests of every method without its own handler (one
  /// method table shared by many sessions, where a handler per method
  /// would be a copy of the table in each).
  void on_other_requests(RequestRouter router) { other_requests_ = std::move(router); }
  /// Handles the notifications of every method without its own handler.
  void on_other_notifications(NotificationRouter router) { other_notifications_ = std::move(router); }
  /// Whether JSON-RPC batches (arrays of messages) are served; refused by
  /// default.
  void accept_batches(bool yes) noexcept { accept_batches_ = yes; }
  /// Called for each request as it is read, in arrival order, before its
  /// task starts; an RpcError it throws is the request's answer and the
  /// handler never runs (the MCP lifecycle: nothing but ping before
  /// initialize). Read order matters there: two requests read together
  /// are judged in the order the peer sent them.
  void on_before_request(std::function<void(const Message&)> gate) { gate_ = std::move(gate); }
  /// cancel_request() refuses requests for this method (MCP: initialize
  /// cannot be cancelled).
  void never_cancel(std::string_view method) { (never_cancel_ += method) += '\n'; }
  /// Limits for the JSON of each message (the size is the transport's).
  void json_limits(const http::JsonLimits& limits) noexcept { json_limits_ = limits; }
  /// At this many requests running, the next request waits until one
  /// ends, and run() reads nothing more meanwhile: a peer that floods
  /// requests (and does not read the answers) holds at most this many (and
  /// the one waiting) in memory, whatever the timing. Answers to our own
  /// requests read meanwhile are delivered, so a running request that asked
  /// the peer something gets its answer, if the peer sends it before its
  /// next request. Default 256.
  void max_in_flight(std::size_t n) noexcept { max_in_flight_ = n > 0 ? n : 1; }

  /// Sends a notification to the peer (progress, log messages, ...);
  /// related_request: the peer's request it is sent while serving, if any
  /// (Transport::send).
  Coro<void> notify(std::string_view method, json params = nullptr,
                    const json& related_request = nullptr);
  /// Sends a request and waits for its answer: the result, or the peer's
  /// error as an RpcError. Needs run() going (it reads the answer). If the
  /// peer closes first, ConnectionClosedError (code -32000).
  /// Cancelling the wait tells the peer with notifications/cancelled.
  /// related_request: the peer's request it is sent while serving (a
  /// server's sampling during a tool call), as for notify().
  Coro<json> request(std::string_view method, json params = nullptr,
                     const json& related_request = nullptr);
  /// Cancels the running request with this id; false if there is none.
  bool cancel_request(const json& id);
  /// How many of the peer's requests are running.
  std::size_t in_flight() const noexcept { return running_.size(); }
  /// The transport it runs over.
  Transport& transport() noexcept { return transport_; }

  /// Handles one message from the peer as run() handles each it reads, for a
  /// transport whose owner hands messages in (Streamable HTTP: each POST)
  /// instead of a task reading them: a session fed this way holds no task
  /// and no frame while idle. A request waits here while max_in_flight run;
  /// notifications and the answers to our requests never wait (a running
  /// request may be waiting for one). Nothing happens after close().
  Coro<void> handle(Received message);
  /// The peer is gone (a session fed through handle()): our requests
  /// awaiting an answer fail ("connection closed"), the peer's running
  /// ones are cancelled, and this returns once they have ended.
  Coro<void> close();

  /// Reads and dispatches until the peer closes its side, then waits for the
  /// requests still running and until their answers are out of the process
  /// (Transport::flush()). Cancelling run() cancels them, and run() ends
  /// once they have and the output is flushed (for at most a second: a
  /// peer that does not read cannot hold up a shutdown). If the peer stops taking output (EPIPE on stdout),
  /// run() logs that once to stderr, stops reading, cancels the requests
  /// and returns normally: nobody is left to answer.
  Coro<void> run();

 private:
  Coro<void> dispatch(const Received& in);
  Coro<void> dispatch_batch(json batch);
  // Starts m's task (once fewer than max_in_flight run), or answers it
  // with an error if its id is in use or the gate refuses it.
  Coro<void> take_request(Message m);
  void start_request(Message m);
  // The gate's error answer to m, or null.
  json refusal(const Message& m) const;
  Coro<void> serve_request(Message m);
  Coro<void> read_all();
  void forget(const std::string& key, const json& id) noexcept;
  void output_failed(std::exception_ptr e) noexcept;
  // Cancels the requests still running and waits until they have ended.
  Coro<void> cancel_running();
  Coro<void> until_idle();  // until no request is running
  Coro<void> flush_briefly();  // the transport's flush(), for at most 1 s
  // The answer to one message: a response or an error; null for a
  // notification or a request cancelled through cancel_request().
  Coro<json> answer(Message m);
  Coro<void> send(const json& message, const json& related_request = nullptr);
  void deliver(Message answer);
  void fail_awaiting() noexcept;

  Transport& transport_;
  std::map<std::string, RequestHandler, std::less<>> requests_;
  std::map<std::string, NotificationHandler, std::less<>> notifications_;
  RequestRouter other_requests_;
  NotificationRouter other_notifications_;
  struct Running {
    Task<void> task;
    std::string method;
    CallbackId forget;  // its done-callback, which takes it out of running_
  };
  std::map<std::string, Running, std::less<>> running_;  // by the id (src/mcp/request_key.hpp)
  std::map<std::int64_t, Future<json>> awaiting_;           // our requests, by id
  std::int64_t next_id_ = 1;
  Event idle_;       // set whenever running_ is empty
  Event slot_free_;  // set whenever fewer than max_in_flight_ are running
  std::size_t max_in_flight_ = 256;
  bool accept_batches_ = false;
  std::function<void(const Message&)> gate_;
  // The methods never cancelled, each followed by '\n': "initialize\n",
  // all a server has, fits the string's own buffer (no allocation per session).
  std::string never_cancel_;
  http::JsonLimits json_limits_;
  std::optional<TaskRef> reader_;  // the task in run() while it reads
  bool output_lost_ = false;
  bool closed_ = false;  // close() was called
  // False once the session is destroyed: a run() cancelled by its owner's
  // destructor (a Client dropped without close()) unwinds without it. Made
  // by run(): a session fed through handle() needs none.
  std::shared_ptr<bool> alive_;
};

}  // namespace corio::mcp
