/// \file
/// corio::mcp::stdio_client: an MCP client that owns its stdio server's
/// process (the Python SDK's stdio_client with StdioServerParameters).
///
/// <!-- doc: body (nlohmann::json forecast_args) -->
///     std::vector<std::string> args{"--stdio"};  // named: g++ 12 rejects {...} in co_await
///     std::unique_ptr<corio::mcp::StdioClient> server = co_await corio::mcp::stdio_client("./weather", args);
///     co_await server->initialize();
///     nlohmann::json r = co_await server->call_tool("forecast", forecast_args);
///     co_await server->close();   // and the server process is gone
///
/// The child's stdin and stdout carry the protocol; its stderr goes to this
/// process's stderr, or, with StdioClientOptions::on_stderr, to that
/// function as it comes. Its environment is the Python SDK's default one
/// (HOME, LOGNAME, PATH, SHELL, TERM and USER from this process: secrets in
/// other variables do not leak to a server) plus StdioClientOptions::env.
///
/// Stopping, as the MCP specification's stdio shutdown says: close the
/// child's stdin, give it `grace` to exit, then SIGTERM, then after `grace`
/// again SIGKILL. close() does that and returns once the child is gone;
/// destroying a StdioClient that was not closed (the owning task cancelled,
/// an exception) starts the same sequence in a task of its own, so the
/// child never outlives it for long, and the loop reaps it. A child still
/// running when the loop closes is killed then (subprocess.hpp).
///
/// When the server goes away mid-call (it exits, closes its stdout), the
/// calls waiting for an answer throw ConnectionClosedError (jsonrpc.hpp),
/// and process().returncode() says how it ended.
///
/// Suspends: stdio_client() while the process starts; close() until the
/// child has exited; the rest as Client. Resumed by: the loop (the pipes,
/// the child's pidfd, the grace timers).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <corio/coro.hpp>
#include <corio/mcp/client.hpp>
#include <corio/mcp/transport.hpp>
#include <corio/subprocess.hpp>
#include <corio/task.hpp>

namespace corio::mcp {

/// How stdio_client() starts and stops the server (StdioServerParameters
/// beyond command and args, and the SDK's errlog).
struct StdioClientOptions {
  /// Added to the default environment (HOME, LOGNAME, PATH, SHELL, TERM,
  /// USER), replacing those of the same name.
  std::map<std::string, std::string> env;
  std::optional<std::string> cwd;  ///< the server's working directory
  /// Called with what the server writes to stderr, as it comes (chunks, not
  /// lines); empty: the server's stderr is this process's.
  std::function<void(std::string_view)> on_stderr;
  /// After stdin closes, how long the server has to exit before SIGTERM;
  /// after SIGTERM, how long before SIGKILL (the Python SDK's 2 s).
  std::chrono::milliseconds grace{2000};
  std::string client_name = "corio";     ///< the clientInfo sent by initialize()
  std::string client_version = "0.1.0";  ///< the same
};

namespace detail {
struct StdioChild;  // the process, the transport over its pipes (stdio_client.cpp)
// Made before the Client that uses the transport (a base, so that it is
// built first); shared, so that a shutdown going on after the StdioClient
// is gone keeps the pipes the cancelled session still unwinds through.
struct StdioChildRef {
  std::shared_ptr<StdioChild> child;
};
}  // namespace detail

/// A Client over a stdio server's pipes that owns the server's process.
class StdioClient : private detail::StdioChildRef, public Client {
 public:
  /// Over p's pipes (stdin and stdout piped; stderr piped when
  /// options.on_stderr is set); stdio_client() makes one.
  StdioClient(Process p, StdioClientOptions options);
  /// Not closed: the shutdown sequence goes on in a task of its own.
  ~StdioClient();

  /// Stops the session (Client::close()), then the server: stdin closed,
  /// SIGTERM after grace, SIGKILL after grace again; its returncode (as
  /// Process::returncode()). Cancelled meanwhile, it kills the server at once.
  Coro<int> close();
  /// The server's process (pid(), returncode()).
  const Process& process() const noexcept;

 private:
  std::chrono::milliseconds grace_;
  bool closed_ = false;
};

/// Starts command with args as an MCP stdio server (a program name without
/// '/' is searched in PATH) and gives a client over its pipes, not yet
/// initialized. Throws std::system_error when the program cannot start.
Coro<std::unique_ptr<StdioClient>> stdio_client(std::string command, std::vector<std::string> args,
                                                StdioClientOptions options);
/// The same with the default options. Overloads, not default
/// arguments: g++ 12 destroys a defaulted argument of a coroutine awaited in
/// the same expression twice (a crash, with StdioClientOptions' std::function).
Coro<std::unique_ptr<StdioClient>> stdio_client(std::string command, std::vector<std::string> args);
/// The same with no args and the default options.
Coro<std::unique_ptr<StdioClient>> stdio_client(std::string command);

}  // namespace corio::mcp
