/// \file
/// The seam between a JSON-RPC session and what carries its messages, and
/// MCP's stdio transport: one message per line, UTF-8 JSON without
/// embedded newlines, stdin in and stdout out.
///
/// Keeping this an interface lets the Streamable HTTP transport (one POST
/// per message, answers as JSON or an SSE stream; streamable_http.hpp) plug
/// into the same session.
///
/// Suspends: receive() until a whole line (or EOF) arrives; send() while the
/// output pipe is full. Resumed by: the loop (the pipes' readiness).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <corio/coro.hpp>
#include <corio/mcp/jsonrpc.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

namespace corio::mcp {

/// What one receive() got: a message's text, or a message that was over the
/// size limit (its bytes were skipped; the session answers with an error).
struct Received {
  std::string text;  ///< the message, as received
  bool too_large = false;  ///< it was over the size limit and skipped
};

/// What carries a Session's messages: stdio's lines, Streamable HTTP's
/// requests and streams.
class Transport {
 public:
  virtual ~Transport() = default;
  /// The next message, or nullopt once the peer closed its side.
  virtual Coro<std::optional<Received>> receive() = 0;
  /// One message, framed as the transport frames them. Messages sent from
  /// different tasks never interleave. related_request: the id of the
  /// peer's request this message answers or is sent while serving
  /// (progress, log messages); null for none. Streamable HTTP carries each
  /// request's traffic on that request's own response stream and routes by
  /// it; stdio has one pipe and ignores it.
  virtual Coro<void> send(std::string_view message, const json& related_request) = 0;
  /// The peer's request with this id is over: answered (the answer went
  /// through send()) or cancelled (no answer, as MCP asks). A stream kept
  /// for it can end.
  virtual void request_done(const json& /*id*/) noexcept {}
  /// The answer to the peer's request with this id just went through
  /// send(): nothing more will be sent for it (request_done() follows, a
  /// turn of the loop later). Streamable HTTP answers a request whose only
  /// message is its answer with a JSON body.
  virtual void request_answered(const json& /*id*/) noexcept {}
  /// Ends the stream that carries the peer's request with this id now, the
  /// request running on (Streamable HTTP: the client resumes the stream
  /// later); nothing where there is one channel (stdio).
  virtual void close_stream(const json& /*id*/) noexcept {}
  /// Until what send() took has left the process (the session's last step:
  /// an exit right after must not cut an answer, or half of one).
  virtual Coro<void> flush() { co_return; }
};

/// The largest message the transports take by default (4 MiB).
inline constexpr std::size_t kDefaultMaxMessage = 4 * 1024 * 1024;

/// MCP's stdio transport: one JSON message per line, read from a stream
/// and written to another.
class StdioTransport final : public Transport {
 public:
  /// Over any pair of streams (tests use pipes or sockets).
  StdioTransport(StreamReader in, StreamWriter out, std::size_t max_message = kDefaultMaxMessage);
  /// Over this process's stdin and stdout (pipe_streams.hpp). Nothing else
  /// may write to stdout: it is the protocol's channel; log to stderr.
  static StdioTransport open(std::size_t max_message = kDefaultMaxMessage);

  /// Waits first while the output is above its high-water mark: a host
  /// that does not read stdout stops the reading of stdin, so memory stays
  /// bounded by the marks plus the answers of the requests in flight.
  Coro<std::optional<Received>> receive() override;
  Coro<void> send(std::string_view message, const json& related_request) override;
  Coro<void> flush() override;

 private:
  StreamReader in_;
  StreamWriter out_;
  std::size_t max_message_;
};

}  // namespace corio::mcp
