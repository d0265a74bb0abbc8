// A simulation's programs and their children (see sim_process.hpp).
#include "core/backend/sim/sim_process.hpp"

#include <cerrno>
#include <csignal>
#include <system_error>
#include <utility>

#include "core/backend/sim/loop_driver.hpp"
#include "core/backend/sim/sim_network.hpp"
#include <corio/detail/sim_world.hpp>

namespace corio::detail::sim {

namespace {

// Signals whose default action is to do nothing (or to stop, which a
// simulated child has no terminal to notice).
bool ignored_by_default(int signo) noexcept {
  return signo == SIGCHLD || signo == SIGURG || signo == SIGWINCH || signo == SIGCONT ||
         signo == SIGSTOP || signo == SIGTSTP || signo == SIGTTIN || signo == SIGTTOU;
}

}  // namespace

Programs::Programs(SimWorld& world, Network& net)
    : world_(world), net_(net), replaced_(replace_process_system(this)) {}

Programs::~Programs() {
  replace_process_system(replaced_);
  clear();
}

Programs::Running* Programs::find(pid_t pid) noexcept {
  for (Running& c : children_) {
    if (c.pid == pid) return &c;
  }
  return nullptr;
}

// stdin goes from the parent to the child, stdout and stderr back. A
// stream nobody pipes still exists for the program: stdin reads EOF, what
// stdout and stderr get is dropped.
void Programs::make_pipes(Running& c, const Request& request, Child& child) {
  const std::array<bool, 3> piped{request.pipe_in, request.pipe_out, request.pipe_err};
  const std::array<Socket*, 3> ends{&child.in, &child.out, &child.err};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto [w, r] = i == 0 ? net_.pipe(c.parent, c.host) : net_.pipe(c.host, c.parent);
    c.streams[i] = i == 0 ? r : w;
    const int parent_end = i == 0 ? w : r;
    if (piped[i]) {
      *ends[i] = Socket(parent_end);
    } else if (i == 0) {
      net_.close(parent_end);
    } else {
      net_.find(parent_end)->sink = true;
      c.parent_ends.push_back(parent_end);
    }
  }
}

ProcessSystem::Child Programs::spawn(const Request& request, std::function<void(int)> on_exit) {
  const auto main = mains_.find(request.program);
  if (main == mains_.end()) {
    const std::string why = "cannot run '" + request.program + "': not a program of the simulation";
    throw std::system_error(ENOENT, std::generic_category(), why);
  }
  Running c;
  c.parent = net_.current_host();
  c.pid = next_pid_++;
  c.host = world_.add_host(request.program + "#" + std::to_string(c.pid), net_.address(c.parent));
  c.on_exit = std::move(on_exit);
  Child child;  // its pipe ends close themselves if this throws
  child.pid = c.pid;
  try {
    make_pipes(c, request, child);
    std::vector<std::string> argv{request.program};
    argv.insert(argv.end(), request.args.begin(), request.args.end());
    c.main = world_.loop(c.host).create_task(main->second(std::move(argv)));
    children_.push_back(std::move(c));
  } catch (...) {
    close_fds(c);
    throw;
  }
  return child;
}

int Programs::signal(pid_t pid, int signo) noexcept {
  Running* c = closing_ ? nullptr : find(pid);
  if (c == nullptr || c->gone) return -ESRCH;
  if (signo == 0 || c->ending) return 0;  // a dying process still takes signals
  try {
    if (signo != SIGKILL && LoopDriver::signal(world_.loop(c->host), signo)) return 0;
    if (ignored_by_default(signo)) return 0;
    c->killed_by = signo;
    end(*c);
  } catch (...) {
    return -ENOMEM;  // no memory to queue the handler or the cancellations
  }
  return 0;
}

std::optional<Socket> Programs::standard_stream(int fd) {
  if (fd < 0 || fd > 2) return std::nullopt;
  const int host = net_.current_host();
  for (Running& c : children_) {
    if (c.host != host || c.gone) continue;
    const int end = std::exchange(c.streams[static_cast<std::size_t>(fd)], -1);
    if (end < 0) {
      throw std::system_error(EBADF, std::generic_category(),
                              "standard stream " + std::to_string(fd) + " taken already");
    }
    return Socket(end);
  }
  return std::nullopt;
}

// The process is ending: its tasks unwind (what they hold closes).
void Programs::end(Running& c) {
  c.ending = true;
  LoopDriver::cancel_tasks(world_.loop(c.host));
}

int Programs::returncode(const Running& c) const noexcept {
  if (c.killed_by != 0) return -c.killed_by;
  if (c.main.cancelled() || c.main.exception()) return 1;  // an exception nobody caught
  return c.main.result();
}

void Programs::close_fds(Running& c) noexcept {
  for (int& fd : c.streams) {
    if (fd >= 0) net_.close(std::exchange(fd, -1));
  }
  for (int fd : c.parent_ends) net_.close(fd);
  c.parent_ends.clear();
}

bool Programs::reap() {
  bool any = false;
  for (Running& c : children_) {
    if (c.gone) continue;
    if (!c.ending && c.main.done()) {
      end(c);
      any = true;
    }
    if (!c.ending || LoopDriver::has_tasks(world_.loop(c.host))) continue;
    c.gone = true;
    close_fds(c);
    EventLoop& parent = world_.loop(c.parent);
    if (!parent.is_closed()) {
      parent.call_soon([exit = std::move(c.on_exit), code = returncode(c)] { exit(code); });
    }
    any = true;
  }
  return any;
}

std::size_t Programs::running() const noexcept {
  std::size_t n = 0;
  for (const Running& c : children_) n += c.gone ? 0 : 1;
  return n;
}

bool Programs::exited(int host) const noexcept {
  for (const Running& c : children_) {
    if (c.host == host) return c.gone;
  }
  return false;
}

void Programs::clear() noexcept {
  closing_ = true;  // a process handle dropped now signals nobody
  children_.clear();
}

}  // namespace corio::detail::sim
