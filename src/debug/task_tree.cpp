// The task table and tree of task_tree.hpp, built from the flat list of
// graphs capture_all_call_graphs() takes: the tree follows each graph's
// awaiting.tasks downwards (a capture goes outwards, through awaited_by).
#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include <corio/task_tree.hpp>

namespace corio {
namespace {

// The library's own coroutines (gather's, wait's) are not where a user looks.
// g++ names them corio::detail::...; clang 14's function names are bare, so
// their files tell: corio's src/ as this file was compiled (the same build
// compiled them), or a public header under include/corio/.
constexpr std::string_view kSelf = __FILE__;  // <root>/src/debug/task_tree.cpp
constexpr std::size_t kSelfAt = kSelf.rfind("debug/task_tree.cpp");
static_assert(kSelfAt != std::string_view::npos, "task_tree.cpp moved: name its new place above");

bool internal(const FrameCallGraphEntry& f) {
  constexpr std::string_view src_root = kSelf.substr(0, kSelfAt);
  return f.function.substr(0, f.function.find('(')).find("corio::detail::") != std::string::npos ||
         std::string_view(f.file).starts_with(src_root) ||
         f.file.find("include/corio/") != std::string::npos;
}

// The innermost frame outside the library, else the innermost.
std::string where_of(const FutureCallGraph& g) {
  if (g.call_stack.empty()) return "-";
  auto it = std::find_if(g.call_stack.begin(), g.call_stack.end(),
                         [](const FrameCallGraphEntry& f) { return !internal(f); });
  const FrameCallGraphEntry& f = it != g.call_stack.end() ? *it : g.call_stack.front();
  const std::size_t slash = f.file.rfind('/');
  return fmt::format("{}:{}", slash == std::string::npos ? f.file : f.file.substr(slash + 1), f.line);
}

std::string awaiting_of(const FutureCallGraph& g) {
  return g.state == "suspended" ? detail::describe_awaiting(g.awaiting) : "-";
}

// A long name would push every other column right: names are cut here.
constexpr std::size_t kMaxNameColumn = 32;

}  // namespace

std::string format_task_table(std::span<const FutureCallGraph> graphs) {
  std::size_t name_width = 4, where_width = 5;
  for (const FutureCallGraph& g : graphs) {
    name_width = std::max(name_width, std::min(g.task.get_name().size(), kMaxNameColumn));
    where_width = std::max(where_width, where_of(g).size());
  }
  std::string out = fmt::format("{:>4}  {:<{}}  {:<19}  {:<{}}  {}\n", "ID", "NAME", name_width,
                                "STATE", "WHERE", where_width, "AWAITING");
  for (const FutureCallGraph& g : graphs) {
    out += fmt::format("{:>4}  {:<{}}  {:<19}  {:<{}}  {}\n", g.task.id(),
                       g.task.get_name().substr(0, kMaxNameColumn), name_width, g.state,
                       where_of(g), where_width, awaiting_of(g));
  }
  return out;
}

namespace {

class TreePrinter {
 public:
  explicit TreePrinter(std::span<const FutureCallGraph> graphs) : graphs_(graphs) {
    for (const FutureCallGraph& g : graphs) index_[g.task.id()] = &g;
  }

  std::string print() {
    for (const FutureCallGraph& g : graphs_) {
      if (g.awaited_by.empty()) node(g, "");
    }
    // What is left awaits and is awaited: a cycle, or the tasks hanging from one.
    for (const FutureCallGraph& g : graphs_) {
      if (!shown(g)) node(g, "");
    }
    return std::move(out_);
  }

 private:
  bool shown(const FutureCallGraph& g) const {
    return shown_.count(g.task.id()) != 0;
  }

  void node(const FutureCallGraph& g, const std::string& indent) {
    detail::format_graph_node(g, indent, out_);
    shown_.insert(g.task.id());
    path_.push_back(g.task.id());
    if (g.state == "suspended" && !g.awaiting.tasks.empty()) {
      out_ += indent + "+ Awaits:\n";
      for (const TaskRef& t : g.awaiting.tasks) child(t, indent + "   ");
    }
    path_.pop_back();
  }

  void child(const TaskRef& t, const std::string& indent) {
    auto it = index_.find(t.id());
    const char* mark = nullptr;
    if (std::find(path_.begin(), path_.end(), t.id()) != path_.end()) {
      mark = "(cycle)";
    } else if (it == index_.end()) {
      mark = t.done() ? "done" : "(not pending)";
    } else if (shown(*it->second)) {
      mark = "(shown above)";
    }
    if (mark) {
      out_ += fmt::format("{}* Task(name='{}', id={}) {}\n", indent, t.get_name(), t.id(), mark);
      return;
    }
    node(*it->second, indent);
  }

  std::span<const FutureCallGraph> graphs_;
  std::unordered_map<std::uint64_t, const FutureCallGraph*> index_;
  std::unordered_set<std::uint64_t> shown_;
  std::vector<std::uint64_t> path_;  // the chain from the root: short, searched linearly
  std::string out_;
};

}  // namespace

std::string format_task_tree(std::span<const FutureCallGraph> graphs) {
  return TreePrinter(graphs).print();
}

}  // namespace corio
