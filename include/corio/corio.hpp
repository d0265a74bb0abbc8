// Everything corio offers, in one include.
#pragma once

#include <corio/as_completed.hpp>
#include <corio/barrier.hpp>
#include <corio/clock.hpp>
#include <corio/condition.hpp>
#include <corio/coro.hpp>
#include <corio/errors.hpp>
#include <corio/event.hpp>
#include <corio/event_loop.hpp>
#include <corio/executor.hpp>
#include <corio/future.hpp>
#include <corio/gather.hpp>
#include <corio/handle.hpp>
#include <corio/lock.hpp>
#include <corio/outcome.hpp>
#include <corio/run.hpp>
#include <corio/semaphore.hpp>
#include <corio/shield.hpp>
#include <corio/sleep.hpp>
#include <corio/task.hpp>
#include <corio/task_group.hpp>
#include <corio/testing/virtual_clock.hpp>
#include <corio/timeout.hpp>
#include <corio/to_thread.hpp>
#include <corio/version.hpp>
#include <corio/wait.hpp>
