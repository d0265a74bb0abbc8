// capture_call_graph / format_call_graph on virtual time: a suspended task's
// chain of coroutines (function, file:line of each co_await), what the
// innermost awaits (sleep with time left, a future, a task, a socket), who
// awaits the task, and the states of tasks with no chain to show.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/test_support.hpp"
#include <corio/call_graph.hpp>
#include <corio/socket.hpp>

namespace corio_test {
namespace {

using corio::Coro;
using corio::FutureCallGraph;
using corio::Task;
using corio::TaskRef;
using namespace std::chrono_literals;

// The lines of the co_awaits the tests expect in call stacks.
unsigned g_leaf_line = 0, g_middle_line = 0, g_outer_line = 0, g_main_line = 0;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

Coro<int> leaf() {
  co_await mark(&g_leaf_line, corio::sleep(5s));
  co_return 1;
}
Coro<int> middle() {
  int v = co_await mark(&g_middle_line, leaf());
  co_return v + 1;
}
Coro<void> outer() { co_await mark(&g_outer_line, middle()); }

// Captures `target`'s graph after `delay`, from a task of its own.
Coro<void> probe(TaskRef target, FutureCallGraph* out, std::string* text) {
  co_await corio::sleep(1s);
  *out = corio::capture_call_graph(target);
  *text = corio::format_call_graph(*out);
}

Coro<void> chain_main(FutureCallGraph* g, std::string* text) {
  Task<void> worker = corio::create_task(outer(), "worker");
  Task<void> p = corio::create_task(probe(worker, g, text));
  co_await mark(&g_main_line, worker);
  co_await p;
}

TEST(CallGraph, ChainInnermostFirstWithFileLineAndTimeLeft) {
  FutureCallGraph g;
  std::string text;
  corio_testing::run_vt(chain_main(&g, &text));
  EXPECT_EQ(g.task.get_name(), "worker");
  EXPECT_EQ(g.state, "suspended");
  ASSERT_EQ(g.call_stack.size(), 3u) << text;
  const char* names[] = {"leaf", "middle", "outer"};
  const unsigned lines[] = {g_leaf_line, g_middle_line, g_outer_line};
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(g.call_stack[i].function.find(names[i]), std::string::npos) << text;
    EXPECT_EQ(g.call_stack[i].line, lines[i]) << text;
    EXPECT_TRUE(ends_with(g.call_stack[i].file, "call_graph_test.cpp")) << g.call_stack[i].file;
  }
  EXPECT_EQ(g.awaiting.kind, "sleep");
  ASSERT_TRUE(g.awaiting.time_left.has_value());
  EXPECT_NEAR(*g.awaiting.time_left, 4.0, 1e-9);

  // The main task awaits the worker: it is in awaited_by, with its own chain.
  ASSERT_EQ(g.awaited_by.size(), 1u) << text;
  const FutureCallGraph& by = g.awaited_by[0];
  EXPECT_EQ(by.awaiting.kind, "task");
  ASSERT_EQ(by.awaiting.tasks.size(), 1u);
  EXPECT_TRUE(by.awaiting.tasks[0] == g.task);
  ASSERT_FALSE(by.call_stack.empty());
  EXPECT_NE(by.call_stack[0].function.find("chain_main"), std::string::npos) << text;
  EXPECT_EQ(by.call_stack[0].line, g_main_line);

  EXPECT_NE(text.find("* Task(name='worker', id="), std::string::npos) << text;
  EXPECT_NE(text.find("awaiting sleep (4.000 s left)"), std::string::npos) << text;
  EXPECT_NE(text.find("call_graph_test.cpp', line " + std::to_string(g_leaf_line) + ", in "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("+ Awaited by:\n   * Task(name='"), std::string::npos) << text;
  EXPECT_NE(text.find("awaiting task on Task(name='worker'"), std::string::npos) << text;
}

Coro<int> wait_future(corio::Future<int> f) { co_return co_await f; }

Coro<void> states_main() {
  corio::EventLoop& loop = corio::get_running_loop();
  corio::Future<int> fut = loop.create_future<int>();
  Task<int> t = corio::create_task(wait_future(fut), "waiter");
  EXPECT_EQ(corio::capture_call_graph(t).state, "not started");
  EXPECT_TRUE(corio::capture_call_graph(t).call_stack.empty());

  auto self = corio::capture_call_graph();
  EXPECT_TRUE(self.has_value());
  if (self) {
    EXPECT_EQ(self->state, "running");
    EXPECT_TRUE(self->call_stack.empty());
  }

  co_await corio::sleep(0s);
  FutureCallGraph g = corio::capture_call_graph(t);
  EXPECT_EQ(g.state, "suspended");
  EXPECT_EQ(g.awaiting.kind, "future");
  EXPECT_EQ(g.awaiting.futures, 1u);
  EXPECT_TRUE(g.awaiting.tasks.empty());
  EXPECT_NE(g.awaiting.address, nullptr);
  EXPECT_EQ(g.call_stack.size(), 1u);
  EXPECT_NE(g.call_stack.at(0).function.find("wait_future"), std::string::npos);

  fut.set_result(3);
  EXPECT_EQ(co_await t, 3);
  EXPECT_EQ(corio::capture_call_graph(t).state, "done");
}

namespace naming {
// Suspended a second time: g++ then names the frame by its resume function.
Coro<void> resumed(int rounds, std::string tag) {
  for (int i = 0; i < rounds; ++i) co_await corio::sleep(1s);
  co_await corio::sleep(10s);
  (void)tag;
}
}  // namespace naming

Coro<void> naming_main() {
  Task<void> t = corio::create_task(naming::resumed(2, "x"), "resumed");
  co_await corio::sleep(3s);
  FutureCallGraph g = corio::capture_call_graph(t);
  EXPECT_EQ(g.call_stack.size(), 1u);
  if (!g.call_stack.empty()) {
    // g++ gives the qualified name and parameters, clang the bare name.
    const std::string& f = g.call_stack[0].function;
    EXPECT_TRUE(ends_with(f, "::naming::resumed(int, std::string)") || f == "resumed") << f;
  }
  t.cancel();
}

TEST(CallGraph, AResumedCoroutineIsNamedAsWritten) { corio_testing::run_vt(naming_main()); }

TEST(CallGraph, NotStartedRunningSuspendedOnAFutureDone) {
  corio_testing::run_vt(states_main());
  EXPECT_FALSE(corio::capture_call_graph().has_value()) << "outside a task";
}

Coro<std::string> recv_some(corio::Socket* s) {
  co_return co_await corio::get_running_loop().sock_recv(*s, 16);
}

Coro<void> socket_main() {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
  corio::Socket a(fds[0]), b(fds[1]);
  Task<std::string> t = corio::create_task(recv_some(&a));
  co_await corio::sleep(0s);
  FutureCallGraph g = corio::capture_call_graph(t);
  EXPECT_EQ(g.awaiting.kind, "socket");
  EXPECT_EQ(g.awaiting.fd, fds[0]);
  EXPECT_FALSE(g.awaiting.write);
  // A socketpair's ends have no names; the peer is told by its process.
  EXPECT_EQ(g.awaiting.peer, "unix:(unnamed)");
  EXPECT_EQ(g.awaiting.peer_pid, ::getpid());
  EXPECT_FALSE(g.awaiting.listening);
  EXPECT_NE(corio::format_call_graph(g).find(
                fmt::format("awaiting socket fd {} (read) peer unix:(unnamed) (pid {})\n", fds[0],
                            ::getpid())),
            std::string::npos)
      << corio::format_call_graph(g);
  co_await corio::get_running_loop().sock_sendall(b, "x");
  EXPECT_EQ(co_await t, "x");
}

TEST(CallGraph, SocketReadNamesItsFdAndPeer) { corio_testing::run_vt(socket_main()); }

Coro<void> accept_one(corio::Socket* listener) {
  co_await corio::get_running_loop().sock_accept(*listener);
}

// A loopback TCP connection: the reading end names the listener's port as
// its peer; the listener, which has no peer, names its own address.
Coro<void> tcp_socket_main() {
  corio::EventLoop& loop = corio::get_running_loop();
  corio::Socket listener = corio::Socket::create(AF_INET, SOCK_STREAM);
  listener.bind(corio::SocketAddress::ip("127.0.0.1", 0));
  listener.listen();
  const std::string server = listener.local_address().to_string();
  corio::Socket client = corio::Socket::create(AF_INET, SOCK_STREAM);
  co_await loop.sock_connect(client, listener.local_address());
  auto [conn, from] = co_await loop.sock_accept(listener);
  Task<std::string> reader = corio::create_task(recv_some(&client), "reader");
  Task<void> acceptor = corio::create_task(accept_one(&listener), "acceptor");
  co_await corio::sleep(0s);
  const FutureCallGraph r = corio::capture_call_graph(reader);
  EXPECT_EQ(r.awaiting.peer, server);
  EXPECT_EQ(r.awaiting.local, client.local_address().to_string());
  EXPECT_FALSE(r.awaiting.peer_pid) << "only a Unix socket tells its peer's process";
  EXPECT_NE(corio::format_call_graph(r).find(" (read) peer " + server + "\n"), std::string::npos)
      << corio::format_call_graph(r);
  const FutureCallGraph a = corio::capture_call_graph(acceptor);
  EXPECT_TRUE(a.awaiting.listening);
  EXPECT_EQ(a.awaiting.peer, "");
  EXPECT_NE(corio::format_call_graph(a).find(" (read) listening on " + server + "\n"),
            std::string::npos)
      << corio::format_call_graph(a);
  acceptor.cancel();
  co_await loop.sock_sendall(conn, "y");
  EXPECT_EQ(co_await reader, "y");
}

TEST(CallGraph, TcpSocketNamesItsPeerAndAListenerItsAddress) {
  corio_testing::run_vt(tcp_socket_main());
}

// Two tasks awaiting each other: each is in the other's awaited_by, and the
// cycle ends where it closes.
Coro<void> await_other(Task<void>* other) {
  co_await corio::sleep(0s);
  co_await *other;
}

Coro<void> cycle_main() {
  Task<void> a, b;
  a = corio::create_task(await_other(&b), "a");
  b = corio::create_task(await_other(&a), "b");
  co_await corio::sleep(1s);
  FutureCallGraph g = corio::capture_call_graph(a);
  EXPECT_EQ(g.awaiting.kind, "task");
  EXPECT_EQ(g.awaiting.tasks.at(0).get_name(), "b");
  EXPECT_EQ(g.awaited_by.size(), 1u);
  if (g.awaited_by.size() == 1) {
    const FutureCallGraph& by_b = g.awaited_by[0];
    EXPECT_EQ(by_b.task.get_name(), "b");
    EXPECT_EQ(by_b.awaited_by.size(), 1u) << corio::format_call_graph(g);
    EXPECT_EQ(by_b.awaited_by.at(0).task.get_name(), "a");
    EXPECT_EQ(by_b.awaited_by.at(0).state, "(cycle)");
  }
  // Cancelling one task of the cycle ends both (the request goes round once).
  a.cancel();
  for (int i = 0; i < 10 && !b.done(); ++i) co_await corio::sleep(0s);
  EXPECT_TRUE(a.cancelled());
  EXPECT_TRUE(b.cancelled());
  EXPECT_EQ(a.cancelling(), 1);
}

TEST(CallGraph, TasksAwaitingEachOtherEndAtTheCycle) { corio_testing::run_vt(cycle_main()); }

}  // namespace
}  // namespace corio_test
