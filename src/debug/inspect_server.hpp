// The loop's inspection server (inspect.hpp): a Unix socket served with the
// loop's own fd callbacks, so it runs between task steps and never shows as
// a task. Internal to the core layer; the answers are inspect_answers.cpp's.
//
// Lifetime rules:
//   1. A connection lives in connections_ from accept to drop(); every exit
//      path of its callbacks ends in at most one drop() and touches nothing
//      after it (drop destroys the connection whose callback is running; the
//      loop keeps the running callback's handle alive).
//   2. The destructor runs on a loop that is not running (EventLoop::close):
//      no callback can be queued mid-way.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <corio/handle.hpp>

namespace corio {
class EventLoop;
}

namespace corio::detail {

class InspectServer {
 public:
  // Listens at path (see inspect.hpp for the checks); throws std::system_error.
  InspectServer(EventLoop& loop, std::string path);
  InspectServer(const InspectServer&) = delete;
  InspectServer& operator=(const InspectServer&) = delete;
  // Closes the connections and the socket, and removes its file.
  ~InspectServer();

 private:
  struct Connection;
  void on_accept();
  void pause_accepting();
  void admit(int fd);
  void on_readable(Connection* c);
  void reply(Connection* c, std::string text);
  void flush(Connection* c);
  void drop(Connection* c) noexcept;
  void watch(int fd, bool write, std::function<void()> fn);
  void unwatch(int fd, bool write);

  EventLoop& loop_;
  std::string path_;
  int fd_ = -1;
  std::vector<std::unique_ptr<Connection>> connections_;
  TimerHandle resume_accepting_;  // set while accepting is paused
};

// The loop's server if inspection is asked for (requested, or CORIO_INSPECT=1)
// and no other loop of the process serves; else nullptr. A server that cannot
// start is reported on stderr, never raised: inspection is no reason for the
// program to fail.
std::unique_ptr<InspectServer> start_inspect_server(EventLoop& loop, bool requested) noexcept;

// The answer to one request line (inspect_answers.cpp).
std::string inspect_answer(EventLoop& loop, std::string_view request);

}  // namespace corio::detail
