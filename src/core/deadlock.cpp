// Deadlock and lost wake-up detection (OnDeadlock in event_loop.hpp).
//
// The loop checks only when it is about to block with no timer at all (poll
// timeout "forever") and nothing else that could wake a task is alive:
// no watched fd or parked socket wait, no executor call in flight, no signal
// handler, no ThreadsafeHold (EventLoop::can_wake; the runtime's own watchers
// do not count). Then, if tasks are pending, every one of them is suspended
// and only another task could wake it, and none can run: a deadlock. The
// check costs nothing per step; it reads the await points that call graphs
// read, once.
//
// The report is the wait-for graph: an edge from a task to each pending task
// it awaits (directly, or through gather/wait/TaskGroup) and to the holder of
// the Lock it waits for. A cycle there (A awaits B awaits A; A waits for a
// lock B holds while B waits for one A holds) is named as such; without one,
// a task waits for something nobody is left to do (an Event nobody will set,
// a Queue get with no producer left): a lost wake-up. Each stuck task's call
// graph follows. A task suspended at an awaitable foreign to corio is not
// judged (its awaitable may have a way of its own to be woken): no report.
// Nor is a lost wake-up while a thread that is not corio's lives: it may call
// call_soon_threadsafe without a ThreadsafeHold (a cycle is reported still:
// no post can make its tasks stop awaiting each other).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include <corio/call_graph.hpp>
#include <corio/detail/sanitizers.hpp>
#include <corio/event_loop.hpp>

#include <corio/detail/runtime_threads.hpp>

namespace corio {

// ThreadSanitizer runs a background thread of its own in every process.
#if defined(CORIO_TSAN)
constexpr long kSanitizerThreads = 1;
#else
constexpr long kSanitizerThreads = 0;
#endif

// num_threads is /proc/self/stat's 20th field, the 18th after the ')' that
// ends the command name (which may hold spaces and parentheses).
bool detail::foreign_threads_exist() noexcept {
  char buf[1024];
  std::FILE* f = std::fopen("/proc/self/stat", "re");
  if (!f) return true;
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');
  for (int field = 2; p && field < 20; ++field) p = std::strchr(p + 1, ' ');
  if (!p) return true;
  const long threads = std::strtol(p + 1, nullptr, 10);
  return threads > 1 + kSanitizerThreads + static_cast<long>(g_runtime_threads.load(std::memory_order_relaxed));
}

namespace {

// Bounds on the report: it must stay readable with 100,000 stuck tasks.
constexpr std::size_t kMaxCycles = 8;
constexpr std::size_t kMaxGraphs = 32;

struct Finding {
  std::string text;
  std::vector<std::uint32_t> ids;  // the stuck tasks, sorted
  std::optional<TaskRef> culprit;  // the first cycle's first task, if any
};

using Graphs = std::vector<FutureCallGraph>;
using Cycle = std::vector<std::size_t>;  // indices into Graphs, in wait-for order

// Edges of the wait-for graph, as indices of pending tasks.
std::vector<std::vector<std::size_t>> wait_for_edges(const Graphs& graphs) {
  std::unordered_map<const detail::TaskBase*, std::size_t> index;
  for (std::size_t i = 0; i < graphs.size(); ++i) index[graphs[i].task.task()] = i;
  std::vector<std::vector<std::size_t>> edges(graphs.size());
  auto link = [&](std::size_t from, const TaskRef& to) {
    auto it = index.find(to.task());
    if (it != index.end()) edges[from].push_back(it->second);
  };
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    for (const TaskRef& t : graphs[i].awaiting.tasks) link(i, t);
    if (graphs[i].awaiting.held_by) link(i, *graphs[i].awaiting.held_by);
  }
  return edges;
}

// One cycle per back edge of a depth-first search (iterative: wait chains
// can be long), each starting at its lowest index so that none repeats.
std::vector<Cycle> find_cycles(const std::vector<std::vector<std::size_t>>& edges) {
  enum Color : unsigned char { white, grey, black };
  std::vector<Color> color(edges.size(), white);
  std::vector<Cycle> cycles;
  for (std::size_t root = 0; root < edges.size() && cycles.size() < kMaxCycles; ++root) {
    if (color[root] != white) continue;
    std::vector<std::pair<std::size_t, std::size_t>> stack{{root, 0}};  // node, next edge
    color[root] = grey;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next == edges[node].size()) {
        color[node] = black;
        stack.pop_back();
        continue;
      }
      const std::size_t to = edges[node][next++];
      if (color[to] == white) {
        color[to] = grey;
        stack.emplace_back(to, 0);
      } else if (color[to] == grey && cycles.size() < kMaxCycles) {
        auto from =
            std::find_if(stack.begin(), stack.end(), [to](auto& e) { return e.first == to; });
        Cycle c;
        for (; from != stack.end(); ++from) c.push_back(from->first);
        std::rotate(c.begin(), std::min_element(c.begin(), c.end()), c.end());
        if (std::find(cycles.begin(), cycles.end(), c) == cycles.end()) cycles.push_back(c);
      }
    }
  }
  return cycles;
}

std::string format_cycle(const Graphs& graphs, const Cycle& c) {
  std::string line = "cycle: ";
  for (std::size_t i : c) line += detail::task_label(graphs[i].task) + " -> ";
  return line + detail::task_label(graphs[c.front()].task) + "\n";
}

std::optional<Finding> find_deadlock(detail::LoopCore& loop) {
  Graphs graphs = detail::capture_all_flat(loop);
  for (const FutureCallGraph& g : graphs) {
    if (g.state != "suspended") return std::nullopt;
  }
  std::sort(graphs.begin(), graphs.end(),
            [](const auto& a, const auto& b) { return a.task.id() < b.task.id(); });
  Finding f;
  for (const FutureCallGraph& g : graphs) f.ids.push_back(static_cast<std::uint32_t>(g.task.id()));
  const std::vector<Cycle> cycles = find_cycles(wait_for_edges(graphs));
  f.text = fmt::format("deadlock: every task is suspended and nothing can wake them ({} task{})\n",
                       graphs.size(), graphs.size() == 1 ? "" : "s");
  for (const Cycle& c : cycles) f.text += format_cycle(graphs, c);
  if (cycles.empty()) {
    if (detail::foreign_threads_exist()) return std::nullopt;
    f.text += "no cycle: each waits for something no task is left to do (a lost wake-up)\n";
  } else {
    f.culprit = graphs[cycles.front().front()].task;
  }
  for (std::size_t i = 0; i < graphs.size() && i < kMaxGraphs; ++i)
    f.text += format_call_graph(graphs[i]);
  if (graphs.size() > kMaxGraphs)
    f.text += fmt::format("... and {} more\n", graphs.size() - kMaxGraphs);
  f.text.pop_back();
  return f;
}

}  // namespace

ThreadsafeHold EventLoop::hold_threadsafe() {
  check_open();
  threadsafe_holds.fetch_add(1, std::memory_order_relaxed);
  return ThreadsafeHold(this);
}

// A post of nothing: under the loop's mutex, with a wake-up, since the loop
// may be blocked because of this hold and must check again without it.
void ThreadsafeHold::reset() noexcept {
  if (EventLoop* loop = std::exchange(loop_, nullptr)) (void)loop->io().post_threadsafe(nullptr, true);
}

Handle ThreadsafeHold::post_and_release(std::function<void()> fn) {
  EventLoop* loop = std::exchange(loop_, nullptr);
  if (!loop) throw RuntimeError("post_and_release() on an empty ThreadsafeHold");
  return loop->post_callback(std::move(fn), true);
}

void EventLoop::note_foreign_post() noexcept {
  const std::thread::id owner = owner_thread_.load(std::memory_order_relaxed);
  if (owner != std::thread::id{} && owner != std::this_thread::get_id())
    foreign_poster.store(true, std::memory_order_relaxed);
}

bool EventLoop::can_wake() const noexcept {
  const std::size_t sources =
      io_watchers() + executor_calls + threadsafe_holds.load(std::memory_order_acquire);
  return sources > internal_watchers || foreign_poster.load(std::memory_order_relaxed);
}

double EventLoop::check_deadlock() {
  if (on_deadlock != OnDeadlock::ignore && !can_wake()) report_deadlock();
  return poll_timeout();  // what the report's handler (or raise mode) woke runs now
}

// Raise mode fails the future run_until_complete runs: a task is cancelled,
// so that its frames unwind (their destructors release what they hold), and
// run_until_complete turns the CancelledError into the DeadlockError, as
// timeout() turns its cancellation into TimeoutError.
void EventLoop::report_deadlock() noexcept {
  try {
    std::optional<Finding> found = find_deadlock(*this);
    if (!found || found->ids == deadlock_reported_) return;
    deadlock_reported_ = found->ids;
    if (on_deadlock == OnDeadlock::raise && main_ && !main_->done()) {
      std::exception_ptr error = std::make_exception_ptr(DeadlockError(found->text));
      if (main_->is_task()) {
        deadlock_error_ = error;
        (void)static_cast<detail::TaskBase*>(main_)->request_cancel("deadlock");
      } else {
        main_->set_exception(error);
      }
      return;
    }
    call_exception_handler({found->text, nullptr, found->culprit});
  } catch (...) {  // out of memory for the report: the loop waits as it would have
    report_to_stderr(
        {"deadlock detected; its report failed", std::current_exception(), std::nullopt});
  }
}

void EventLoop::run_forever_for(detail::FutureStateBase* main) {
  main_ = main;
  deadlock_error_ = nullptr;
  struct Forget {
    EventLoop* loop;
    ~Forget() { loop->main_ = nullptr; }
  } forget{this};
  run_forever();
}

void EventLoop::rethrow_deadlock(detail::FutureStateBase* main) {
  if (!deadlock_error_) return;
  std::exception_ptr error = std::exchange(deadlock_error_, nullptr);
  if (main->cancelled()) std::rethrow_exception(error);
}

}  // namespace corio
