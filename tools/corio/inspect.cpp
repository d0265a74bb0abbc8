// `corio ps PID`, `corio pstree PID`, `corio stats PID`: the client of a
// process's inspection socket (include/corio/inspect.hpp has the protocol).
// Each asks one question on one connection and prints the answer; what can
// go wrong on the way is said in the user's terms: no such process, a
// process that does not serve inspection, a process of another user.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include <fmt/core.h>

#include "commands.hpp"
#include <corio/corio.hpp>

namespace corio_cli {
namespace {

using namespace std::chrono_literals;

struct InspectArgs {
  std::string pid;
  bool json = false;
};

// A failure to report: the message and the exit code.
struct Failure {
  std::string message;
  int code = 1;
};

std::optional<int> parse_pid(const std::string& text) {
  int pid = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (ec != std::errc() || end != text.data() + text.size() || pid <= 0) return std::nullopt;
  return pid;
}

// The owner of a live process, or nullopt if there is none with that pid.
std::optional<uid_t> process_owner(int pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return std::nullopt;
  struct stat st {};
  if (::stat(fmt::format("/proc/{}", pid).c_str(), &st) != 0) return ::geteuid();
  return st.st_uid;
}

// Where the process's socket is. Root inspecting another user's process
// looks where that user's process would have put it without XDG_RUNTIME_DIR
// (which root's environment does not tell).
std::string socket_path(int pid, uid_t owner) {
  if (owner == ::geteuid()) return corio::inspect_socket_path(pid);
  return fmt::format("/tmp/corio-{}/{}.sock", owner, pid);
}

Failure connect_failure(int pid, const std::string& path, const std::system_error& e) {
  const int err = e.code().value();
  if (err == ENOENT || err == ECONNREFUSED) {
    return {fmt::format("process {} does not serve inspection (no one listens at {}): start it "
                        "with CORIO_INSPECT=1",
                        pid, path)};
  }
  if (err == EACCES || err == EPERM) {
    return {fmt::format("permission refused: {} is another user's", path)};
  }
  return {fmt::format("cannot connect to {}: {}", path, e.what())};
}

corio::Coro<std::string> ask(std::string path, std::string request) {
  auto [reader, writer] = co_await corio::open_unix_connection(path);
  writer.write(request + "\n");
  co_await writer.drain();
  std::string answer = co_await reader.read();
  writer.close();
  co_return answer;
}

corio::Coro<int> inspect(const InspectArgs* args, std::string command) {
  const std::string where = "corio " + command;
  const std::optional<int> pid = parse_pid(args->pid);
  if (!pid) {
    fmt::print(stderr, "{}: '{}' is not a process id\n", where, args->pid);
    co_return 2;
  }
  const std::optional<uid_t> owner = process_owner(*pid);
  if (!owner) {
    fmt::print(stderr, "{}: no such process: {}\n", where, *pid);
    co_return 1;
  }
  if (*owner != ::geteuid() && ::geteuid() != 0) {
    fmt::print(stderr, "{}: permission refused: process {} belongs to uid {}\n", where, *pid,
               *owner);
    co_return 1;
  }
  const std::string path = socket_path(*pid, *owner);
  std::optional<Failure> failure;
  std::string answer;
  try {
    const std::string request = args->json ? command + " json" : command;
    answer = co_await corio::wait_for(ask(path, request), 10s);
  } catch (const std::system_error& e) {
    failure = connect_failure(*pid, path, e);
  } catch (const corio::TimeoutError&) {
    failure = Failure{fmt::format("process {} did not answer within 10 s", *pid)};
  }
  if (!failure && answer.rfind("error: ", 0) == 0) failure = Failure{answer.substr(7)};
  if (!failure && answer.empty()) failure = Failure{fmt::format("process {} closed the connection without an answer", *pid)};
  if (failure) {
    std::string& m = failure->message;
    if (!m.empty() && m.back() == '\n') m.pop_back();
    fmt::print(stderr, "{}: {}\n", where, m);
    co_return failure->code;
  }
  fmt::print("{}", answer);
  co_return 0;
}

Command inspect_command(std::string name, std::string help, std::string example) {
  auto args = std::make_shared<InspectArgs>();
  return Command{
      name,
      std::move(help),
      std::move(example),
      [args](Options& o) {
        o.positional("pid", args->pid, "the process (run with CORIO_INSPECT=1)", true);
        o.flag("--json", args->json, "One JSON object per line instead of text");
      },
      [args, name] { return corio::run(inspect(args.get(), name)); },
  };
}

}  // namespace

Command ps_command() {
  return inspect_command("ps",
                         "List the tasks of a running corio process (started with "
                         "CORIO_INSPECT=1): id, name, state, what each awaits and where",
                         "corio ps 4242");
}

Command pstree_command() {
  return inspect_command("pstree",
                         "Show the task tree of a running corio process (started with "
                         "CORIO_INSPECT=1), with each task's await chain",
                         "corio pstree 4242");
}

Command stats_command() {
  return inspect_command("stats",
                         "Show the event loop's counters of a running corio process (started "
                         "with CORIO_INSPECT=1)",
                         "corio stats 4242 --json");
}

}  // namespace corio_cli
