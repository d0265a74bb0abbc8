// A simulation's programs (testing::Simulation::program) and the children
// create_subprocess_exec starts from them: the thread's ProcessSystem while
// the simulation lives (detail/process_system.hpp).
//
// A child is a host of its own (its loop, its tasks; its parent's address,
// as a process shares its machine's) whose main task runs the program's
// coroutine; its standard streams are simulated pipes (Network::pipe) to
// its parent's host, taken by the program through connect_read_pipe(0) and
// connect_write_pipe(1 or 2), as a real program takes its fds. It exits
// when its main task ends: its other tasks are cancelled, as a process's
// threads die with it, and once they have unwound the parent hears the
// returncode (the main's result; 1 for an exception; -signo for a signal).
// A signal runs the handler the program set (add_signal_handler), else
// takes its default action: SIGCHLD, SIGURG, SIGWINCH and SIGCONT are
// ignored, any other ends the child, as SIGKILL always does.
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/detail/process_system.hpp>
#include <corio/task.hpp>

namespace corio::detail {
class SimWorld;
}

namespace corio::detail::sim {

class Network;

using ProgramMain = std::function<Coro<int>(std::vector<std::string> argv)>;

class Programs final : public ProcessSystem {
 public:
  Programs(SimWorld& world, Network& net);
  ~Programs() override;

  void add(std::string name, ProgramMain main) { mains_[std::move(name)] = std::move(main); }

  Child spawn(const Request& request, std::function<void(int)> on_exit) override;
  int signal(pid_t pid, int signo) noexcept override;
  std::optional<Socket> standard_stream(int fd) override;

  // Between rounds: children whose main ended begin to exit, those whose
  // tasks have all ended exit (the parent hears it). True if any did.
  bool reap();
  // Children that have not exited yet.
  std::size_t running() const noexcept;
  // Whether host is a child that has exited: it never runs again.
  bool exited(int host) const noexcept;
  // The world ends: every child's task handle goes (before the loops close).
  void clear() noexcept;

 private:
  struct Running {
    pid_t pid = -1;
    int host = -1, parent = -1;
    Task<int> main;
    std::function<void(int)> on_exit;
    std::array<int, 3> streams{-1, -1, -1};  // the child's ends, until the program takes them
    std::vector<int> parent_ends;            // the ends nobody piped: closed when it exits
    int killed_by = 0;
    bool ending = false, gone = false;
  };
  Running* find(pid_t pid) noexcept;
  void make_pipes(Running& c, const Request& request, Child& child);
  void end(Running& c);
  void close_fds(Running& c) noexcept;
  int returncode(const Running& c) const noexcept;

  SimWorld& world_;
  Network& net_;
  std::map<std::string, ProgramMain> mains_;
  std::deque<Running> children_;
  pid_t next_pid_ = 100;
  bool closing_ = false;
  ProcessSystem* replaced_ = nullptr;
};

}  // namespace corio::detail::sim
