// Children and standard streams behind one interface, so that a simulation
// (corio::testing::Simulation::program) can run a "subprocess" as a host of
// its own, its pipes simulated streams, as the SocketSystem seam lets it
// stand in for the OS's sockets. Null on every thread but a simulation's:
// create_subprocess_exec then spawns a real process (net/subprocess.cpp) and
// connect_read_pipe/connect_write_pipe take the process's own fds, as
// before. Nothing here is on a per-byte path: bytes move through the
// backend seam, as a socket's do.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <corio/socket.hpp>

namespace corio::detail {

class ProcessSystem {
 public:
  // What create_subprocess_exec asks for: each standard stream piped to the
  // parent or not (a stdin not piped reads EOF, a stdout or stderr not
  // piped is discarded: a simulated child has no terminal to share).
  struct Request {
    std::string program;
    std::vector<std::string> args;
    bool pipe_in = false, pipe_out = false, pipe_err = false;
  };
  // The child: its pid and the parent's ends of its pipes (each valid only
  // when piped), non-blocking, for the loop.
  struct Child {
    pid_t pid = -1;
    Socket in, out, err;
  };
  virtual ~ProcessSystem() = default;
  // Starts the child; on_exit runs once, on the calling loop, with its
  // returncode (negated signal number when a signal ended it). Throws
  // std::system_error (ENOENT: no such program) when it cannot start.
  virtual Child spawn(const Request& request, std::function<void(int)> on_exit) = 0;
  // kill(2) for a child spawn() started: 0, or -errno (-ESRCH: it is gone).
  virtual int signal(pid_t pid, int signo) noexcept = 0;
  // The calling program's standard stream fd (0, 1, 2), once: the pipe end
  // its parent's spawn() made; nullopt when the caller is not such a
  // program (the process's own fd is meant). Throws std::system_error
  // (EBADF) when the stream was taken already.
  virtual std::optional<Socket> standard_stream(int fd) = 0;
};

// This thread's, or null: the OS's processes and fds.
ProcessSystem* process_system() noexcept;
// Makes p this thread's (null: the OS's again); returns the one it replaces.
ProcessSystem* replace_process_system(ProcessSystem* p) noexcept;

}  // namespace corio::detail
