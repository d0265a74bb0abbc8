/// \file
/// corio::Executor and corio::ThreadPoolExecutor: where blocking work goes
/// (concurrent.futures), so that it does not freeze the loop.
///
/// <!-- doc: body (corio::EventLoop& loop) -->
///     corio::ThreadPoolExecutor pool(4);
///     int n = co_await loop.run_in_executor(&pool, count_lines);
///     int m = co_await corio::to_thread(count_lines);   // the loop's default pool
///
/// The pool is a room of the core layer (src/executor/), compiled into it because
/// the loop owns one, as asyncio's loop owns its default executor (created on
/// first use, shut down by close()).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace corio {

/// One unit of work for an executor. run() is called once, on a worker
/// thread, and takes ownership of the job (so a job can outlive its run, e.g.
/// to carry its result back to a loop).
class ExecutorJob {
 public:
  virtual ~ExecutorJob() = default;
  /// Does the work; self is this job, the callee's from now on.
  virtual void run(std::unique_ptr<ExecutorJob> self) noexcept = 0;
};

/// Something that runs jobs on other threads. Thread-safe. An executor runs
/// every job it accepted, even after shutdown() (run_in_executor relies on it:
/// the loop waits for each call to come back before it closes).
class Executor {
 public:
  virtual ~Executor() = default;
  /// Queues the job. Throws RuntimeError once shut down.
  virtual void submit(std::unique_ptr<ExecutorJob> job) = 0;
  /// Stops accepting jobs; queued jobs still run. With wait, returns once every
  /// job has finished.
  virtual void shutdown(bool wait = true) = 0;

  /// Runs fn() on a worker thread, fire and forget.
  template <class F>
  void post(F fn) {
    struct Job final : ExecutorJob {
      explicit Job(F f) : fn(std::move(f)) {}
      void run(std::unique_ptr<ExecutorJob>) noexcept override { fn(); }
      F fn;
    };
    submit(std::make_unique<Job>(std::move(fn)));
  }
};

/// concurrent.futures.ThreadPoolExecutor: up to max_workers threads, started
/// on demand (only when no started thread is idle), FIFO job order.
class ThreadPoolExecutor final : public Executor {
 public:
  /// 0 picks Python's default: min(32, hardware threads + 4).
  explicit ThreadPoolExecutor(std::size_t max_workers = 0);
  ThreadPoolExecutor(const ThreadPoolExecutor&) = delete;
  ThreadPoolExecutor& operator=(const ThreadPoolExecutor&) = delete;
  /// shutdown(true).
  ~ThreadPoolExecutor() override;

  void submit(std::unique_ptr<ExecutorJob> job) override;
  void shutdown(bool wait = true) override;
  /// The most threads it starts.
  std::size_t max_workers() const noexcept { return max_workers_; }
  /// Threads started so far, and how many of them wait for a job now.
  std::size_t thread_count() const;
  /// How many of the started threads wait for a job now.
  std::size_t idle_threads() const;

 private:
  void worker() noexcept;

  const std::size_t max_workers_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<ExecutorJob>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;  // workers waiting for a job
  bool shutdown_ = false;
};

}  // namespace corio
