/// \file
/// corio::format_task_table / format_task_tree: every task of a loop at once,
/// as `corio ps` and `corio pstree` print them (Python 3.14's `python -m
/// asyncio ps` and `pstree`). Both read the graphs capture_all_call_graphs()
/// takes, so call them on the loop's thread, between steps or from a task.
#pragma once

#include <span>
#include <string>

#include <corio/call_graph.hpp>

namespace corio {

/// One line per task, in id order, under a header line:
///
/// <!-- doc: text -->
///     ID  NAME     STATE      WHERE              AWAITING
///      1  main     suspended  crawl.cpp:40       gather/wait on Task(name='fetch a', id=2), ...
///      2  fetch a  suspended  crawl.cpp:22       sleep (1.250 s left)
///
/// WHERE is the file (without its directory) and line of the innermost
/// suspended co_await outside corio's own coroutines (gather's, wait's); "-" for a task with no suspended chain (running, not
/// started, or suspended at an awaitable foreign to corio).
std::string format_task_table(std::span<const FutureCallGraph> graphs);

/// The tasks as a tree: each task nobody awaits is a root, below it the
/// tasks it awaits, each node in format_call_graph's shape (its await chain
/// included). Tasks in a cycle (a deadlock) have no root: each cycle is shown
/// from its lowest id, and the task that closes it is marked "(cycle)"; a task
/// awaited by several is shown in full once, then "(shown above)".
std::string format_task_tree(std::span<const FutureCallGraph> graphs);

}  // namespace corio
