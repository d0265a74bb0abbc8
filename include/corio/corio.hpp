/// \file
/// Everything corio offers, in one include, but the http and mcp layers:
/// corio/http.hpp and corio/mcp.hpp (they cost compile time: JSON, zlib).
#pragma once

#include <corio/as_completed.hpp>
#include <corio/barrier.hpp>
#include <corio/call_graph.hpp>
#include <corio/clock.hpp>
#include <corio/condition.hpp>
#include <corio/coro.hpp>
#include <corio/daily.hpp>
#include <corio/datagram.hpp>
#include <corio/dns.hpp>
#include <corio/errors.hpp>
#include <corio/event.hpp>
#include <corio/event_loop.hpp>
#include <corio/executor.hpp>
#include <corio/file.hpp>
#include <corio/future.hpp>
#include <corio/gather.hpp>
#include <corio/handle.hpp>
#include <corio/inspect.hpp>
#include <corio/lock.hpp>
#include <corio/os_error.hpp>
#include <corio/outcome.hpp>
#include <corio/pipe_streams.hpp>
#include <corio/queue.hpp>
#include <corio/run.hpp>
#include <corio/semaphore.hpp>
#include <corio/shield.hpp>
#include <corio/sleep.hpp>
#include <corio/socket.hpp>
#include <corio/ssl.hpp>
#include <corio/streams.hpp>
#include <corio/subprocess.hpp>
#include <corio/task.hpp>
#include <corio/task_group.hpp>
#include <corio/task_tree.hpp>
#include <corio/testing/virtual_clock.hpp>
#include <corio/timeout.hpp>
#include <corio/to_thread.hpp>
#include <corio/version.hpp>
#include <corio/wait.hpp>

/// \namespace corio
/// asyncio's programming model in C++20: one thread, one event loop,
/// coroutines (Coro), futures (Future) and tasks (Task) with cooperative
/// cancellation, and asyncio's combinators, primitives, streams and
/// subprocesses on top. docs/README.md is the guide; corio::http and
/// corio::mcp are the HTTP and MCP layers.
