// Call graphs through the combinators: a gather's children are awaited by the
// task that gathers them, and the gathering task awaits each child by name.
#include "async/async_support.hpp"
#include <corio/call_graph.hpp>

namespace corio_async_test {
namespace {

using corio::Coro;
using corio::FutureCallGraph;
using corio::Task;

Coro<int> fetch(double seconds, int v) {
  co_await corio::sleep(Secs(seconds));
  co_return v;
}

Coro<void> gather_both() { co_await corio::gather(fetch(1, 1), fetch(2, 2)); }

Coro<void> probe(corio::TaskRef parent, FutureCallGraph* child_graph,
                 FutureCallGraph* parent_graph) {
  co_await corio::sleep(0.5s);
  *parent_graph = corio::capture_call_graph(parent);
  if (!parent_graph->awaiting.tasks.empty())
    *child_graph = corio::capture_call_graph(parent_graph->awaiting.tasks[0]);
}

Coro<void> gather_main(FutureCallGraph* child_graph, FutureCallGraph* parent_graph) {
  Task<void> parent = corio::create_task(gather_both(), "gatherer");
  co_await probe(parent, child_graph, parent_graph);
  co_await parent;
}

TEST(CallGraphAsync, GatherChildrenAreAwaitedByTheGatheringTask) {
  FutureCallGraph child, parent;
  run_vt(gather_main(&child, &parent));
  EXPECT_EQ(parent.awaiting.kind, "gather/wait");
  EXPECT_EQ(parent.awaiting.tasks.size(), 2u);
  bool in_chain = false;
  for (const auto& f : parent.call_stack)
    in_chain = in_chain || f.function.find("gather_both") != std::string::npos;
  EXPECT_TRUE(in_chain) << corio::format_call_graph(parent);

  EXPECT_EQ(child.awaiting.kind, "sleep");
  EXPECT_NEAR(child.awaiting.time_left.value_or(-1), 0.5, 1e-9);
  EXPECT_EQ(child.call_stack.size(), 1u);
  EXPECT_NE(child.call_stack.at(0).function.find("fetch"), std::string::npos);
  EXPECT_EQ(child.awaited_by.size(), 1u) << corio::format_call_graph(child);
  if (!child.awaited_by.empty()) {
    EXPECT_EQ(child.awaited_by[0].task.get_name(), "gatherer");
  }
}

}  // namespace
}  // namespace corio_async_test
