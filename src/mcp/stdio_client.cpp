// stdio_client and StdioClient (see stdio_client.hpp): a Client whose
// server is a child process it starts and stops.
#include <csignal>
#include <cstdlib>
#include <system_error>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/mcp/stdio_client.hpp>
#include <corio/timeout.hpp>

namespace corio::mcp {

namespace detail {

struct StdioChild {
  explicit StdioChild(Process p) : proc(std::move(p)), pipes(proc.out, proc.in) {}
  Process proc;
  StdioTransport pipes;
  std::optional<Task<void>> stderr_reader;
};

}  // namespace detail

namespace {

using detail::StdioChild;

// The Python SDK's default environment: what a server needs to run, and no
// variable that may hold a secret. Values starting with "()" (bash's
// exported functions) are left out, as the SDK does.
std::map<std::string, std::string> server_environment(
    const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (const char* name : {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}) {
    const char* value = std::getenv(name);
    if (value && std::string_view(value).substr(0, 2) != "()") env[name] = value;
  }
  for (const auto& [name, value] : extra) env[name] = value;
  return env;
}

Coro<void> forward_stderr(StreamReader err, std::function<void(std::string_view)> sink) {
  for (;;) {
    const std::string chunk = co_await err.read(64 * 1024);
    if (chunk.empty()) co_return;
    sink(chunk);
  }
}

// Signals a child that may have been reaped already (then ESRCH: nothing to do).
void signal_child(Process& p, int signo) noexcept {
  try {
    p.send_signal(signo);
  } catch (const std::system_error&) {
  }
}

Coro<bool> exits_within(Process& p, std::chrono::milliseconds grace) {
  try {
    co_await wait_for(p.wait(), grace);
    co_return true;
  } catch (const TimeoutError&) {
    co_return false;
  }
}

Coro<int> stop_steps(StdioChild& child, std::chrono::milliseconds grace) {
  Process& p = child.proc;
  p.in.close();
  if (!co_await exits_within(p, grace)) {
    signal_child(p, SIGTERM);
    if (!co_await exits_within(p, grace)) signal_child(p, SIGKILL);
  }
  const int code = co_await p.wait();
  // Its stderr ends with it, unless a grandchild holds the pipe open.
  if (child.stderr_reader) {
    try {
      co_await wait_for(*child.stderr_reader, grace);
    } catch (const TimeoutError&) {
    }
  }
  co_return code;
}

// The MCP specification's stdio shutdown: stdin closed, then SIGTERM, then
// SIGKILL, grace apart. Cancelled, it kills at once (the loop reaps).
Coro<int> stop_server(std::shared_ptr<StdioChild> child, std::chrono::milliseconds grace) {
  try {
    co_return co_await stop_steps(*child, grace);
  } catch (const CancelledError&) {
    signal_child(child->proc, SIGKILL);
    if (child->stderr_reader) child->stderr_reader->cancel();
    throw;
  }
}

}  // namespace

StdioClient::StdioClient(Process p, StdioClientOptions options)
    : StdioChildRef{std::make_shared<StdioChild>(std::move(p))},
      Client(child->pipes, std::move(options.client_name), std::move(options.client_version)),
      grace_(options.grace) {
  if (options.on_stderr) {
    child->stderr_reader.emplace(
        create_task(forward_stderr(child->proc.err, std::move(options.on_stderr))));
  }
}

StdioClient::~StdioClient() {
  if (closed_) return;
  // A task of its own keeps the child (and the pipes the cancelled session
  // still unwinds through) until the server is gone. With no loop running
  // there is nothing to wait with: the kill is at once.
  EventLoop* loop = corio::detail::tls_running_loop;
  try {
    if (loop) {
      loop->create_task(stop_server(child, grace_));
      return;
    }
  } catch (...) {  // no memory for the task
  }
  signal_child(child->proc, SIGKILL);
}

Coro<int> StdioClient::close() {
  co_await Client::close();
  closed_ = true;  // from here on, stop_server kills even if cancelled
  co_return co_await stop_server(child, grace_);
}

const Process& StdioClient::process() const noexcept { return child->proc; }

Coro<std::unique_ptr<StdioClient>> stdio_client(std::string command, std::vector<std::string> args,
                                                StdioClientOptions options) {
  SubprocessOptions spawn;
  spawn.in = Redirect::pipe;
  spawn.out = Redirect::pipe;
  spawn.err = options.on_stderr ? Redirect::pipe : Redirect::inherit;
  spawn.cwd = options.cwd;
  spawn.env = server_environment(options.env);
  Process p =
      co_await create_subprocess_exec(std::move(command), std::move(args), std::move(spawn));
  co_return std::make_unique<StdioClient>(std::move(p), std::move(options));
}

// Not coroutines: the defaults are made here, outside the caller's co_await.
Coro<std::unique_ptr<StdioClient>> stdio_client(std::string command, std::vector<std::string> args) {
  return stdio_client(std::move(command), std::move(args), StdioClientOptions{});
}

Coro<std::unique_ptr<StdioClient>> stdio_client(std::string command) {
  return stdio_client(std::move(command), std::vector<std::string>{}, StdioClientOptions{});
}

}  // namespace corio::mcp
