/// \file
/// corio::capture_call_graph / print_call_graph: a task's async call graph,
/// with Python 3.14's names (asyncio.capture_call_graph, print_call_graph).
///
/// C++ coroutines keep no call stack, but every co_await in a Coro records
/// where it is (one pointer store), and every suspended Coro knows the Coro
/// that awaits it. So for a suspended task the graph has:
///  - call_stack: its chain of suspended coroutines, innermost first, each with
///    its function and the file:line of the co_await it is suspended at;
///  - awaiting: what the innermost one waits on (a sleep with the time left, a
///    Future, a Task, a Lock/Semaphore/Event/Condition/Queue with its address
///    and waiter count, a socket read or write with its fd and its peer's
///    address, or its own when it has no peer: a listening socket);
///  - awaited_by: the tasks awaiting this one (directly, or through gather or
///    wait), each with its own graph, outwards.
/// Capturing reads the loop's state: call it on the loop's thread, from a task
/// or between steps (exception handlers do). A task that is running has no
/// suspended chain to show, nor one that waits on an awaitable foreign to
/// corio (it did not record its await point).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <corio/task.hpp>

namespace corio {

/// One suspended coroutine of a task's chain (asyncio.FrameCallGraphEntry).
struct FrameCallGraphEntry {
  std::string function;  ///< the coroutine function and its parameters: "app::fetch(std::string)"
  std::string file;      ///< the file of its current co_await
  unsigned line = 0;     ///< the line of its current co_await
};

/// What a suspended task waits on.
struct AwaitedObject {
  std::string kind;               ///< "sleep", "future", "task", "lock", "queue get", "socket", ...
  const void* address = nullptr;  ///< the primitive or future awaited, when there is one
  std::optional<double> time_left;     ///< seconds until a sleep (or deadline) ends
  std::optional<std::size_t> waiters;  ///< tasks queued on the primitive, this one included
  int fd = -1;                         ///< a socket operation's descriptor
  bool write = false;                  ///< a socket operation waits to write (else to read)
  /// The socket's peer, read from the fd when the graph was captured:
  /// "127.0.0.1:5000", "[::1]:443", "unix:/run/app.sock", "unix:@abstract",
  /// "unix:(unnamed)" (a socketpair's end, an accepted Unix client); empty
  /// when it has none (listening, unconnected) or fd is no socket.
  std::string peer;
  std::string local;                   ///< the socket's own address, in the same form
  bool listening = false;              ///< the socket listens (its read awaits a connection)
  std::optional<int> peer_pid;         ///< a Unix socket peer's process (SO_PEERCRED)
  std::vector<TaskRef> tasks;          ///< tasks awaited (a Task, gather's or wait's children)
  std::size_t futures = 0;             ///< plain futures awaited
  std::optional<TaskRef> held_by;      ///< the pending task holding the awaited Lock
};

/// A task's call graph (asyncio.FutureCallGraph, plus what it awaits).
struct FutureCallGraph {
  TaskRef task;  ///< the task this graph is of
  /// "suspended", "running", "not started", "done", or "suspended elsewhere"
  /// (at an awaitable that is not corio's).
  std::string state;
  std::vector<FrameCallGraphEntry> call_stack;  ///< innermost first
  AwaitedObject awaiting;  ///< what the innermost suspended coroutine waits on
  std::vector<FutureCallGraph> awaited_by;  ///< the tasks awaiting this one, each with its graph
};

/// The call graph of task (asyncio.capture_call_graph(task)); awaited_by is
/// followed outwards at most `depth` levels (a cycle stops where it closes).
FutureCallGraph capture_call_graph(const TaskRef& task, std::size_t depth = 64);
/// The current task's graph (its own chain is running, so it has none; its
/// awaiters' are shown), or nullopt outside a task.
std::optional<FutureCallGraph> capture_call_graph();

/// The graph as text, in the shape of Python's format_call_graph:
///   * Task(name='worker', id=2) awaiting lock 0x55d0c3a0 (2 waiters)
///   + Call stack:
///   |   File 'db.cpp', line 42, in fetch(int)
///   + Awaited by:
/// <!-- doc: text -->
///      * Task(name='main', id=1) awaiting gather/wait ...
std::string format_call_graph(const FutureCallGraph& graph);
/// format_call_graph(capture_call_graph(task)).
std::string format_call_graph(const TaskRef& task);
/// Prints format_call_graph(task) to out.
void print_call_graph(const TaskRef& task, std::ostream& out);
/// Prints format_call_graph(task) to stdout.
void print_call_graph(const TaskRef& task);

/// Every pending task's graph on loop, in id order, each with its awaiters
/// one level deep: what `corio ps` and `pstree` show (task_tree.hpp). One
/// pass over the tasks, where a capture_call_graph() per task would be two.
std::vector<FutureCallGraph> capture_all_call_graphs(EventLoop& loop);

namespace detail {
// "sleep (1.500 s left)", "lock 0x55d0c3a0 (2 waiting)", "gather/wait on Task(...)".
std::string describe_awaiting(const AwaitedObject& awaiting);
// One node of format_call_graph: its task line and call stack, each line
// prefixed by indent, without the tasks around it.
void format_graph_node(const FutureCallGraph& graph, const std::string& indent, std::string& out);
// For the loop's reports: "\n+ Call stack (awaiting sleep):\n|   File ..." for a
// suspended task, "" otherwise. Reads only the task's own frames, not what it
// awaits (at loop close that may be gone already).
std::string format_await_chain(const TaskBase& t);
// Every pending task's graph without its awaiters (awaited_by empty), in one
// pass over the registry: the deadlock report's wait-for graph.
std::vector<FutureCallGraph> capture_all_flat(LoopCore& loop);
// "Task(name='worker', id=2)", as the graphs name tasks.
std::string task_label(const TaskRef& t);
// "\n+ Raised through (...):\n|   File ..." for the sites an exception left a
// task's coroutines through, innermost first; "" for none.
std::string format_unwind(std::span<const AwaitSite> sites);
}  // namespace detail

}  // namespace corio
