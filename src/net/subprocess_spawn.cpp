// spawn_child (see subprocess_spawn.hpp).
//
// posix_spawn rather than fork: glibc runs the child on the parent's memory
// with CLONE_VFORK until exec, so it costs no page-table copy, is safe in a
// multithreaded program (nothing but the file actions runs before exec),
// and reports an exec failure (ENOENT, EACCES) as its return value.
//
// Descriptors: everything corio opens is O_CLOEXEC, and the child closes
// every descriptor above 2 before exec (asyncio's close_fds=True), so a
// child holds no end of another child's pipe: each pipe reads EOF as soon
// as its own child is done with it.
#include "net/subprocess_spawn.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <system_error>

#include <corio/c_string.hpp>
#include <corio/detail/os_error.hpp>

namespace corio::detail {

namespace {

// posix_spawn_* calls return their error instead of setting errno.
void check(int rc, const char* what) {
  if (rc != 0) throw_errno(rc, what);
}

class FileActions {
 public:
  FileActions() { check(posix_spawn_file_actions_init(&fa_), "posix_spawn_file_actions_init"); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  ~FileActions() { posix_spawn_file_actions_destroy(&fa_); }

  void dup2(int fd, int target) {
    check(posix_spawn_file_actions_adddup2(&fa_, fd, target), "posix_spawn_file_actions_adddup2");
  }
  void open(int target, const char* path, int flags) {
    check(posix_spawn_file_actions_addopen(&fa_, target, path, flags, 0),
          "posix_spawn_file_actions_addopen");
  }
  void close_from(int lowest) {
    check(posix_spawn_file_actions_addclosefrom_np(&fa_, lowest),
          "posix_spawn_file_actions_addclosefrom_np");
  }
  void chdir(const std::string& dir) {
    check(posix_spawn_file_actions_addchdir_np(&fa_, dir.c_str()),
          "posix_spawn_file_actions_addchdir_np");
  }
  const posix_spawn_file_actions_t* get() const noexcept { return &fa_; }

 private:
  posix_spawn_file_actions_t fa_;
};

// The child starts with no signal blocked and SIGPIPE and SIGXFSZ at their
// default actions (Python's restore_signals). Without it, a child would
// inherit the mask of the loop's thread, where add_signal_handler blocks
// its signals (corio::run blocks SIGINT): terminate() would not end it.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    check(posix_spawnattr_init(&attr_), "posix_spawnattr_init");
    sigset_t none;
    sigemptyset(&none);
    sigset_t restored = none;
    sigaddset(&restored, SIGPIPE);
    sigaddset(&restored, SIGXFSZ);
    check(posix_spawnattr_setsigmask(&attr_, &none), "posix_spawnattr_setsigmask");
    check(posix_spawnattr_setsigdefault(&attr_, &restored), "posix_spawnattr_setsigdefault");
    check(posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF),
          "posix_spawnattr_setflags");
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  ~SpawnAttributes() { posix_spawnattr_destroy(&attr_); }
  const posix_spawnattr_t* get() const noexcept { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

struct Pipe {
  Socket parent;  // non-blocking, for the loop
  Socket child;   // blocking, as programs expect their standard streams
};

// The child's end is numbered 3 or above: in a program running with a
// standard stream closed, pipe2 can hand out 0, 1 or 2, and installing one
// stream over that number would overwrite another stream's pipe.
Pipe make_pipe(bool parent_reads) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) < 0) throw_errno(errno, "pipe2");
  Socket read_end(fds[0]);  // Socket: the RAII fd owner, blocking or not
  Socket write_end(fds[1]);
  Pipe p{std::move(parent_reads ? read_end : write_end),
         std::move(parent_reads ? write_end : read_end)};
  if (::fcntl(p.parent.fd(), F_SETFL, O_NONBLOCK) < 0) throw_errno(errno, "fcntl");
  if (p.child.fd() < 3) {
    const int moved = ::fcntl(p.child.fd(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) throw_errno(errno, "fcntl");
    p.child = Socket(moved);
  }
  return p;
}

// NULL-terminated arrays of C strings pointing into `strings`.
std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// posix_spawn takes C strings: a NUL would cut the program, an argument,
// the directory or a variable short (Python refuses them too).
void check_spawn_strings(const std::string& program, const std::vector<std::string>& args,
                         const SubprocessOptions& opts) {
  check_c_string(program, "the program");
  for (const std::string& arg : args) check_c_string(arg, "an argument");
  if (opts.cwd) check_c_string(*opts.cwd, "cwd");
  if (!opts.env) return;
  for (const auto& [name, value] : *opts.env) {
    check_c_string(name, "an environment variable's name");
    check_c_string(value, "an environment variable's value");
  }
}

}  // namespace

SpawnedChild spawn_child(const std::string& program, const std::vector<std::string>& args,
                         const SubprocessOptions& opts) {
  check_spawn_strings(program, args, opts);
  SpawnedChild child;
  FileActions actions;
  // The child's pipe ends stay open here until posix_spawn has run.
  std::array<Socket, 3> child_ends;
  const std::array<Redirect, 3> modes{opts.in, opts.out, opts.err};
  const std::array<Socket*, 3> parent_ends{&child.in, &child.out, &child.err};
  for (int target = 0; target < 3; ++target) {
    const auto i = static_cast<std::size_t>(target);
    switch (modes[i]) {
      case Redirect::inherit:
        break;
      case Redirect::pipe: {
        Pipe p = make_pipe(target != STDIN_FILENO);
        actions.dup2(p.child.fd(), target);
        *parent_ends[i] = std::move(p.parent);
        child_ends[i] = std::move(p.child);
        break;
      }
      case Redirect::devnull:
        actions.open(target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY);
        break;
      case Redirect::to_stdout:  // stderr only: stdout is installed by now
        actions.dup2(STDOUT_FILENO, target);
        break;
    }
  }
  actions.close_from(3);
  if (opts.cwd) actions.chdir(*opts.cwd);

  std::vector<std::string> argv_strings;
  argv_strings.reserve(args.size() + 1);
  argv_strings.push_back(program);
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  const std::vector<char*> argv = c_strings(argv_strings);
  std::vector<std::string> env_strings;
  if (opts.env) {
    for (const auto& [name, value] : *opts.env) env_strings.push_back(name + "=" + value);
  }
  const std::vector<char*> envp = c_strings(env_strings);

  const SpawnAttributes attributes;
  const int rc = posix_spawnp(&child.pid, program.c_str(), actions.get(), attributes.get(),
                              argv.data(), opts.env ? envp.data() : environ);
  if (rc != 0) throw_errno(rc, "cannot run '" + program + "'");
  return child;
}

}  // namespace corio::detail
