// A fake Redis server on loopback, for the tests of a broken or hostile
// peer: it reads each command (a RESP array) and answers it as the test's
// script says; an answer may stall, leaving the connection open and silent
// until the client closes it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <corio/redis.hpp>
#include <corio/streams.hpp>

namespace redis_testing {

class FakeRedis {
 public:
  // The bytes answering command `command` (0-based) of connection
  // `connection` (in accept order), sent before the stall when `stall`.
  struct Answer {
    std::string bytes;
    bool stall = false;
  };
  using Script = std::function<Answer(int connection, int command)>;

  // The connections share the script and the count with the handle, and
  // may outlive it (a stalled one ends when its client closes).
  static corio::Coro<FakeRedis> start(Script script) {
    auto state = std::make_shared<State>(State{std::move(script), 0});
    corio::ClientConnected handler = [state](corio::StreamReader r, corio::StreamWriter w) {
      return serve(state, std::move(r), std::move(w));
    };
    corio::Server server = co_await corio::start_server(handler, "127.0.0.1", 0);
    co_return FakeRedis(std::move(state), std::move(server));
  }

  corio::redis::ClientOptions options() const {
    corio::redis::ClientOptions o;
    o.port = server_.port();
    return o;
  }
  int connections() const noexcept { return state_->accepted; }

 private:
  struct State {
    Script script;
    int accepted;
  };
  FakeRedis(std::shared_ptr<State> state, corio::Server server)
      : state_(std::move(state)), server_(std::move(server)) {}

  // Reads one command; false at EOF.
  static corio::Coro<bool> read_command(corio::StreamReader* r) {
    std::string line = co_await r->readline();
    if (line.empty()) co_return false;
    const int args = std::stoi(line.substr(1));  // "*N\r\n"
    for (int i = 0; i < args; ++i) {
      line = co_await r->readline();  // "$LEN\r\n"
      co_await r->readexactly(std::stoul(line.substr(1)) + 2);
    }
    co_return true;
  }

  static corio::Coro<void> serve(std::shared_ptr<State> state, corio::StreamReader r,
                                 corio::StreamWriter w) {
    const int connection = state->accepted++;
    for (int command = 0; co_await read_command(&r); ++command) {
      const Answer answer = state->script(connection, command);
      w.write(answer.bytes);
      co_await w.drain();
      if (answer.stall) {
        while (!(co_await r.read(4096)).empty()) {
        }
        co_return;
      }
    }
  }

  std::shared_ptr<State> state_;
  corio::Server server_;
};

}  // namespace redis_testing
