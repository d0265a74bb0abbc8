// bench/mcp's load generator: starts an MCP server as a child process,
// initializes it, then sends tools/call "echo" requests over its stdin and
// reads the answers from its stdout for a fixed time, with `--inflight N`
// requests outstanding (1: strict round trips). Plain blocking POSIX I/O:
// the driver uses neither corio nor an SDK, so it favours no server.
//
//   mcp_roundtrip --impl corio --duration 3 --inflight 1 -- ./corio_echo_server
//
// Prints JSON lines: {"impl", "metric": "mcp_call_rate_<N>", "value", "unit": "calls/s"}.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Child {
  pid_t pid = -1;
  int to = -1, from = -1;
};

Child spawn(char** argv) {
  int in[2], out[2];
  if (pipe(in) < 0 || pipe(out) < 0) std::exit(1);
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    for (int fd : {in[0], in[1], out[0], out[1], devnull}) close(fd);
    execvp(argv[0], argv);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  c.to = in[1];
  c.from = out[0];
  return c;
}

void write_all(int fd, const std::string& s) {
  for (std::size_t done = 0; done < s.size();) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n <= 0) std::exit(1);
    done += static_cast<std::size_t>(n);
  }
}

// Reads whole lines; counts the ones that answer a request (have "id").
class Lines {
 public:
  explicit Lines(int fd) : fd_(fd) {}
  std::string next() {
    for (;;) {
      const std::size_t nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        std::string line = buf_.substr(pos_, nl - pos_);
        pos_ = nl + 1;
        if (pos_ > 65536) {
          buf_.erase(0, pos_);
          pos_ = 0;
        }
        return line;
      }
      char chunk[65536];
      const ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n <= 0) {
        std::fprintf(stderr, "mcp_roundtrip: the server closed its stdout\n");
        std::exit(1);
      }
      buf_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buf_;
  std::size_t pos_ = 0;
};

std::string call(long id) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}})" "\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string impl = "server";
  double duration = 3;
  int inflight = 1;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; i += 2) {
    if (i + 1 >= argc) break;
    if (!std::strcmp(argv[i], "--impl")) impl = argv[i + 1];
    if (!std::strcmp(argv[i], "--duration")) duration = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--inflight")) inflight = std::atoi(argv[i + 1]);
  }
  if (i >= argc - 1) {
    std::fprintf(stderr, "usage: mcp_roundtrip [--impl NAME] [--duration S] [--inflight N] -- SERVER [ARGS...]\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  Child c = spawn(argv + i + 1);
  Lines lines(c.from);
  write_all(c.to, R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})" "\n");
  while (lines.next().find("\"id\":0") == std::string::npos) {
  }
  write_all(c.to, R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n");

  using clock = std::chrono::steady_clock;
  long sent = 0, answered = 0;
  for (; sent < inflight; ++sent) write_all(c.to, call(sent + 1));
  const auto start = clock::now();
  const auto end = start + std::chrono::duration<double>(duration);
  while (clock::now() < end) {
    if (lines.next().find("\"id\"") == std::string::npos) continue;  // a notification
    ++answered;
    write_all(c.to, call(++sent));
  }
  const double secs = std::chrono::duration<double>(clock::now() - start).count();
  const long in_window = answered;
  close(c.to);  // EOF: the server finishes what it has and exits
  while (answered < sent) {
    if (lines.next().find("\"id\"") != std::string::npos) ++answered;
  }
  int status = 0;
  waitpid(c.pid, &status, 0);
  std::printf("{\"impl\": \"%s\", \"metric\": \"mcp_call_rate_%d\", \"value\": %.1f, \"unit\": \"calls/s\"}\n",
              impl.c_str(), inflight, static_cast<double>(in_window) / secs);
  return 0;
}
