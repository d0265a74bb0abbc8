// Async call graphs (call_graph.hpp). A suspended task's chain is read from
// its coroutine frames: the task knows its innermost suspended Coro, each Coro
// its awaiting Coro (CoroPromiseBase::parent) and where it is suspended (the
// site await_transform recorded). What the innermost waits on comes from the
// await point's describe function. "Awaited by" is the reverse of what every
// pending task's await point says it awaits, computed once per capture.
#include <algorithm>
#include <iostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include <corio/call_graph.hpp>
#include <corio/event_loop.hpp>

#include "socket_endpoints.hpp"

namespace corio {
namespace {

using detail::CoroPromiseBase;
using detail::FutureStateBase;
using detail::task_label;
using detail::TaskBase;

// A chain deeper than this is cut: a report must stay readable and bounded
// (chains of 200,000 Coros are legal).
constexpr std::size_t kMaxFrames = 256;

bool is_running(const TaskBase& t) {
  return t.loop() && t.loop()->running_task.load(std::memory_order_relaxed) == &t;
}

std::string_view state_of(const TaskBase& t) {
  if (t.done()) return "done";
  if (is_running(t)) return "running";
  if (!t.started()) return "not started";
  if (!t.waiting_on()) return "suspended elsewhere";
  return "suspended";
}

// The qualified name and parameters without the return type:
// "corio::Coro<long unsigned int> ns::f(int)" is "ns::f(int)". The return
// type ends at the last space outside angle brackets before the '('.
std::string_view without_return_type(std::string_view name) {
  const std::size_t open = name.find('(');
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i < open && i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (name[i] == ' ' && depth == 0) start = i + 1;
  }
  return name.substr(start);
}

// The function as written: "ns::f(int)". g++ names a coroutine resumed after
// its first suspension by its resume function,
// "void ns::f(f(int)::_ZN2ns1fEi.Frame*)": the outer name's scope with the
// inner name and its parameters.
std::string tidy_function_name(std::string_view compiler_name) {
  constexpr std::string_view kFrame = ".Frame*)";
  const std::string_view name = without_return_type(compiler_name);
  const std::size_t open = name.find('(');
  const std::size_t mangled = name.rfind("::_Z");
  if (open == std::string_view::npos || mangled == std::string_view::npos || mangled < open ||
      !name.ends_with(kFrame)) {
    return std::string(name);
  }
  const std::size_t scope = name.substr(0, open).rfind("::");
  std::string out(scope == std::string_view::npos ? std::string_view{} : name.substr(0, scope + 2));
  out += name.substr(open + 1, mangled - open - 1);  // "f(int)"
  return out;
}

FrameCallGraphEntry entry_of(const detail::AwaitSite& s) {
  return {tidy_function_name(s.function_name()), s.file_name(), s.line()};
}

void walk_chain(const TaskBase& t, std::vector<FrameCallGraphEntry>& out) {
  const CoroPromiseBase* p =
      &std::coroutine_handle<CoroPromiseBase>::from_address(t.innermost().address()).promise();
  while (p && out.size() < kMaxFrames) {
    out.push_back(entry_of(p->await_site()));
    p = p->parent();
  }
}

detail::AwaitInfo describe(const detail::AwaitPoint& p) {
  detail::AwaitInfo info;
  if (p.ops->describe) p.ops->describe(&p, info);
  return info;
}

// The loop's pending tasks, to tell a live lock holder from one that ended.
using LiveSet = std::unordered_set<const TaskBase*>;

LiveSet live_tasks(detail::LoopCore& loop) {
  const std::vector<TaskBase*> all = loop.tasks.snapshot();
  return LiveSet(all.begin(), all.end());
}

AwaitedObject awaited_object(const TaskBase& t, const LiveSet& live) {
  AwaitedObject a;
  const detail::AwaitPoint& p = *t.waiting_on();
  const detail::AwaitInfo info = describe(p);
  a.kind = p.ops->what;
  a.address = info.object;
  if (info.has_waiters) a.waiters = info.waiters;
  if (info.deadline >= 0 && t.loop())
    a.time_left = std::max(0.0, info.deadline - t.loop()->loop().time());
  a.fd = info.fd;
  a.write = info.write;
  if (a.fd >= 0) detail::describe_socket_endpoints(a.fd, a);
  if (info.holder && live.count(info.holder))
    a.held_by.emplace(const_cast<TaskBase*>(info.holder));
  for (FutureStateBase* s : info.awaited) {
    if (s->is_task()) {
      a.tasks.emplace_back(static_cast<TaskBase*>(s));
    } else {
      ++a.futures;
    }
  }
  return a;
}

// For each awaited state, the pending tasks suspended on it.
using AwaiterMap = std::unordered_map<const FutureStateBase*, std::vector<TaskBase*>>;

AwaiterMap awaiter_map(detail::LoopCore& loop) {
  AwaiterMap map;
  for (TaskBase* u : loop.tasks.snapshot()) {
    if (state_of(*u) != "suspended") continue;
    for (FutureStateBase* s : describe(*u->waiting_on()).awaited) map[s].push_back(u);
  }
  return map;
}

FutureCallGraph capture_flat(TaskBase& t, const LiveSet& live) {
  FutureCallGraph g;
  g.task = TaskRef(&t);
  g.state = state_of(t);
  if (g.state == "suspended") {
    walk_chain(t, g.call_stack);
    g.awaiting = awaited_object(t, live);
  }
  return g;
}

FutureCallGraph capture(TaskBase& t, const AwaiterMap& awaiters, const LiveSet& live,
                        std::size_t depth, std::vector<const TaskBase*>& path) {
  FutureCallGraph g = capture_flat(t, live);
  auto it = awaiters.find(&t);
  if (depth == 0 || it == awaiters.end()) return g;
  path.push_back(&t);
  for (TaskBase* u : it->second) {
    // A cycle (a deadlock) ends where it closes: the task is shown, not again its awaiters.
    if (std::find(path.begin(), path.end(), u) != path.end()) {
      FutureCallGraph back;
      back.task = TaskRef(u);
      back.state = "(cycle)";
      g.awaited_by.push_back(std::move(back));
      continue;
    }
    g.awaited_by.push_back(capture(*u, awaiters, live, depth - 1, path));
  }
  path.pop_back();
  return g;
}

void format_stack(const std::vector<FrameCallGraphEntry>& stack, const std::string& indent,
                  std::string& out) {
  for (const FrameCallGraphEntry& f : stack)
    out += fmt::format("{}|   File '{}', line {}, in {}\n", indent, f.file, f.line, f.function);
}

void format_into(const FutureCallGraph& g, const std::string& indent, std::string& out) {
  detail::format_graph_node(g, indent, out);
  if (g.awaited_by.empty()) return;
  out += indent + "+ Awaited by:\n";
  for (const FutureCallGraph& by : g.awaited_by) format_into(by, indent + "   ", out);
}

}  // namespace

FutureCallGraph capture_call_graph(const TaskRef& task, std::size_t depth) {
  TaskBase& t = *task.task();
  std::vector<const TaskBase*> path;
  if (!t.loop()) return capture(t, AwaiterMap{}, LiveSet{}, 0, path);
  return capture(t, awaiter_map(*t.loop()), live_tasks(*t.loop()), depth, path);
}

std::optional<FutureCallGraph> capture_call_graph() {
  if (!detail::tls_current_task) return std::nullopt;
  return capture_call_graph(TaskRef(detail::tls_current_task));
}

std::string format_call_graph(const FutureCallGraph& graph) {
  std::string out;
  format_into(graph, "", out);
  return out;
}

std::string format_call_graph(const TaskRef& task) {
  return format_call_graph(capture_call_graph(task));
}

void print_call_graph(const TaskRef& task, std::ostream& out) { out << format_call_graph(task); }

void print_call_graph(const TaskRef& task) { print_call_graph(task, std::cout); }

std::vector<FutureCallGraph> capture_all_call_graphs(EventLoop& loop) {
  detail::LoopCore& core = loop.io().core();
  std::vector<TaskBase*> tasks = core.tasks.snapshot();
  std::sort(tasks.begin(), tasks.end(),
            [](const TaskBase* a, const TaskBase* b) { return a->id() < b->id(); });
  const AwaiterMap awaiters = awaiter_map(core);
  const LiveSet live = live_tasks(core);
  std::vector<FutureCallGraph> graphs;
  graphs.reserve(tasks.size());
  std::vector<const TaskBase*> path;
  for (TaskBase* t : tasks) graphs.push_back(capture(*t, awaiters, live, 1, path));
  return graphs;
}

namespace detail {

std::string task_label(const TaskRef& t) {
  return fmt::format("Task(name='{}', id={})", t.get_name(), t.id());
}

std::string describe_awaiting(const AwaitedObject& a) {
  std::string s = a.kind;
  if (a.fd >= 0) s += fmt::format(" fd {} ({})", a.fd, a.write ? "write" : "read");
  if (!a.peer.empty()) {
    s += " peer " + a.peer;
    if (a.peer_pid) s += fmt::format(" (pid {})", *a.peer_pid);
  } else if (!a.local.empty()) {
    s += (a.listening ? " listening on " : " on ") + a.local;
  }
  if (a.address && a.tasks.empty()) s += fmt::format(" {}", a.address);
  if (a.waiters) s += fmt::format(" ({} waiting)", *a.waiters);
  if (a.time_left) s += fmt::format(" ({:.3f} s left)", *a.time_left);
  for (std::size_t i = 0; i < a.tasks.size(); ++i)
    s += fmt::format("{}{}", i == 0 ? " on " : ", ", task_label(a.tasks[i]));
  if (a.futures) s += fmt::format(" ({} future{})", a.futures, a.futures == 1 ? "" : "s");
  if (a.held_by) s += " held by " + task_label(*a.held_by);
  return s;
}

void format_graph_node(const FutureCallGraph& g, const std::string& indent, std::string& out) {
  out += fmt::format("{}* {}", indent, task_label(g.task));
  if (g.state == "suspended") {
    out += " awaiting " + describe_awaiting(g.awaiting);
  } else {
    out += " " + g.state;
  }
  out += '\n';
  if (!g.call_stack.empty()) {
    out += indent + "+ Call stack:\n";
    format_stack(g.call_stack, indent, out);
  }
}

std::string format_await_chain(const TaskBase& t) {
  if (state_of(t) != "suspended") return {};
  std::vector<FrameCallGraphEntry> stack;
  walk_chain(t, stack);
  std::string out = fmt::format("\n+ Call stack (awaiting {}):\n", t.waiting_on()->ops->what);
  format_stack(stack, "", out);
  out.pop_back();
  return out;
}

std::vector<FutureCallGraph> capture_all_flat(LoopCore& loop) {
  const LiveSet live = live_tasks(loop);
  std::vector<FutureCallGraph> out;
  for (TaskBase* t : loop.tasks.snapshot()) out.push_back(capture_flat(*t, live));
  return out;
}

// The innermost site is that coroutine's last co_await before the throw (a
// co_await is all a Coro records); a site with no line is a coroutine that
// threw before its first co_await, which names no function either: skipped.
std::string format_unwind(std::span<const AwaitSite> sites) {
  std::vector<FrameCallGraphEntry> stack;
  for (const AwaitSite& s : sites) {
    if (s.line() != 0) stack.push_back(entry_of(s));
  }
  if (stack.empty()) return {};
  std::string out = "\n+ Raised through (innermost first, at each coroutine's last co_await):\n";
  format_stack(stack, "", out);
  out.pop_back();
  return out;
}

}  // namespace detail

}  // namespace corio
