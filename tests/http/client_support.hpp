// Helpers for the client tests: peers in child processes (the scripted
// Python server, `python3 -m http.server`, nginx) on loopback, each killed
// and reaped when its handle goes, and the paths of the peer scripts; and a
// canned peer in this process, for what only a corio server can show (when
// the client closed a connection nobody was using).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/temp_dir.hpp"
#include "net/net_support.hpp"
#include <corio/http/client.hpp>

extern char** environ;

namespace corio_http_test {

using namespace corio_net_test;
namespace fs = std::filesystem;

inline fs::path peers_dir() { return fs::path(CORIO_TESTS_DIR) / "http" / "peers"; }

// Debian's interpreter when there, not a version-manager shim on PATH
// (which costs a second per start).
inline std::string python() {
  return fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

// A child process whose stdout the parent reads for its port; SIGKILLed
// and reaped by the destructor. stderr goes to /dev/null.
class PeerProcess {
 public:
  explicit PeerProcess(const std::vector<std::string>& argv) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    out_ = fds[0];
    if (rc != 0) {
      pid_ = -1;
      throw std::runtime_error("cannot start " + argv[0]);
    }
  }
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;
  ~PeerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
  }

  // The number after "port " in the first stdout line that has one
  // (blocking, at most `seconds`); 0 if the child said none.
  std::uint16_t read_port(int seconds = 20) {
    std::string text;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[512];
      const ssize_t n = ::read(out_, buf, sizeof buf);
      if (n <= 0) return 0;
      text.append(buf, static_cast<std::size_t>(n));
      for (const char* key : {"PORT ", "port "}) {
        const std::size_t at = text.find(key);
        if (at == std::string::npos) continue;
        const std::size_t digits = at + 5;
        std::size_t end = digits;
        while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
        if (end > digits && end < text.size()) return static_cast<std::uint16_t>(std::stoi(text.substr(digits, end - digits)));
      }
    }
    return 0;
  }
  // Whether the child has exited (then it is reaped).
  bool exited() {
    if (pid_ <= 0) return true;
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return true;
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
};

// The scripted server (peers/scripted_server.py), once per test process:
// it is stateless per request, and /stats counts are read as differences.
struct ScriptedPeer {
  PeerProcess process{{python(), "-u", (peers_dir() / "scripted_server.py").string()}};
  std::uint16_t port = process.read_port();
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port) + path;
  }
};

// An HTTP/1.1 peer on this loop: it answers every request of a connection
// with `reply` (then closes the connection if close_after_reply), and
// counts the connections the client closed between requests.
struct CannedPeer {
  // Shared with the connection handlers, which may outlive the test body.
  struct State {
    std::string reply;
    bool close_after_reply = false;
    int client_closes = 0;
    corio::Event client_closed;  // set at each client close
  };
  std::shared_ptr<State> state = std::make_shared<State>();
  corio::Server server;
  std::string url(const std::string& path = "/") const {
    return "http://127.0.0.1:" + std::to_string(server.port()) + path;
  }
};

inline Coro<void> serve_canned(StreamReader reader, StreamWriter writer,
                               std::shared_ptr<CannedPeer::State> st) {
  for (;;) {
    try {
      co_await reader.readuntil("\r\n\r\n");
    } catch (const corio::IncompleteReadError& e) {
      if (e.partial.empty()) {
        ++st->client_closes;
        st->client_closed.set();
      }
      co_return;
    }
    writer.write(st->reply);
    co_await writer.drain();
    if (st->close_after_reply) {
      writer.close();
      co_return;
    }
  }
}

inline Coro<CannedPeer> start_canned_peer(std::string reply, bool close_after_reply = false) {
  CannedPeer peer;
  peer.state->reply = std::move(reply);
  peer.state->close_after_reply = close_after_reply;
  corio::ClientConnected handler = [st = peer.state](StreamReader r, StreamWriter w) {
    return serve_canned(std::move(r), std::move(w), st);
  };
  peer.server = co_await corio::start_server(std::move(handler), "127.0.0.1", 0);
  co_return peer;
}

// A port free a moment ago (nginx cannot take port 0): bind, read, close.
inline std::uint16_t free_port() {
  corio::Socket s = raw_listener();
  return s.local_address().port();
}

inline void write_file(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

inline bool run_quiet(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

// A CA, and a certificate for localhost and 127.0.0.1 signed by it, made
// with the openssl command line.
inline bool make_certificates(const fs::path& dir) {
  const std::string d = dir.string();
  write_file(dir / "san.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  return run_quiet("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
                   "-subj /CN=corio-test-ca -keyout " + d + "/ca.key -out " + d + "/ca.pem") &&
         run_quiet("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost "
                   "-keyout " + d + "/server.key -out " + d + "/server.csr") &&
         run_quiet("openssl x509 -req -in " + d + "/server.csr -CA " + d + "/ca.pem -CAkey " + d +
                   "/ca.key -CAcreateserial -days 1 -extfile " + d + "/san.ext -out " + d + "/server.pem");
}

using corio_testing::TempDir;

}  // namespace corio_http_test
