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

// A TaskGroup's owner, waiting at the end of the block, awaits each child:
// a child's graph shows it in awaited_by (both shapes of the group).
Coro<void> group_owner() {
  corio::TaskGroup tg;
  tg.create_task(fetch(1, 1), "child");
  co_await tg.wait();
}

Coro<void> group_body_owner() {
  co_await corio::task_group([](corio::TaskGroup& tg) -> Coro<void> {
    tg.create_task(fetch(1, 1), "child");
    co_return;
  });
}

Coro<void> group_main(Coro<void> owner_coro, FutureCallGraph* child_graph,
                      FutureCallGraph* owner_graph) {
  Task<void> owner = corio::create_task(std::move(owner_coro), "owner");
  co_await probe(owner, child_graph, owner_graph);
  co_await owner;
}

void expect_child_awaited_by_owner(const FutureCallGraph& child, const FutureCallGraph& owner) {
  EXPECT_EQ(owner.awaiting.kind, "gather/wait") << corio::format_call_graph(owner);
  ASSERT_EQ(owner.awaiting.tasks.size(), 1u) << corio::format_call_graph(owner);
  EXPECT_EQ(child.task.get_name(), "child");
  EXPECT_EQ(child.awaiting.kind, "sleep");
  ASSERT_EQ(child.awaited_by.size(), 1u) << corio::format_call_graph(child);
  EXPECT_EQ(child.awaited_by[0].task.get_name(), "owner");
  const std::string text = corio::format_call_graph(child);
  EXPECT_NE(text.find("+ Awaited by:\n   * Task(name='owner'"), std::string::npos) << text;
}

TEST(CallGraphAsync, TaskGroupChildrenAreAwaitedByTheOwner) {
  FutureCallGraph child, owner;
  run_vt(group_main(group_owner(), &child, &owner));
  expect_child_awaited_by_owner(child, owner);
}

TEST(CallGraphAsync, TaskGroupBodyChildrenAreAwaitedByTheOwner) {
  FutureCallGraph child, owner;
  run_vt(group_main(group_body_owner(), &child, &owner));
  expect_child_awaited_by_owner(child, owner);
}

}  // namespace
}  // namespace corio_async_test
