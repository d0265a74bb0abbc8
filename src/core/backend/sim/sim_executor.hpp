// A simulated host's default executor (run_in_executor(nullptr, ...),
// to_thread, and the file operations the sim backend leaves to the pool):
// its jobs run on the simulation's thread, in the round of their host,
// in the order they came, and take no virtual time. A real pool's threads
// would finish in an order no seed decides, and the world, seeing no host
// able to run while one waits for a thread, could not tell "later" from
// "never". A job that blocks blocks the whole simulation, as it would
// block a loop.
#pragma once

#include <deque>
#include <memory>

#include <corio/errors.hpp>
#include <corio/executor.hpp>

namespace corio::detail::sim {

class SimExecutor final : public Executor {
 public:
  ~SimExecutor() override { run_queued(); }

  void submit(std::unique_ptr<ExecutorJob> job) override {
    if (shut_) throw RuntimeError("cannot schedule new futures after shutdown");
    jobs_.push_back(std::move(job));
  }
  // What was queued still runs (the Executor contract): here and now.
  void shutdown(bool /*wait*/) override {
    shut_ = true;
    run_queued();
  }

  bool has_jobs() const noexcept { return !jobs_.empty(); }
  // The jobs queued so far, oldest first; those they queue wait for the
  // next round, as the loop's ready queue runs one batch per iteration.
  void run_round() noexcept {
    for (std::size_t n = jobs_.size(); n > 0 && !jobs_.empty(); --n) run_front();
  }
  void run_queued() noexcept {
    while (!jobs_.empty()) run_front();
  }

 private:
  void run_front() noexcept {
    std::unique_ptr<ExecutorJob> job = std::move(jobs_.front());
    jobs_.pop_front();
    ExecutorJob* j = job.get();
    j->run(std::move(job));
  }

  std::deque<std::unique_ptr<ExecutorJob>> jobs_;
  bool shut_ = false;
};

// What a host's loop holds as its default executor: the world owns the
// SimExecutor, so a program that makes a pool of its own the default
// (set_default_executor) leaves the world nothing dangling.
class SimExecutorRef final : public Executor {
 public:
  explicit SimExecutorRef(SimExecutor& jobs) noexcept : jobs_(jobs) {}
  void submit(std::unique_ptr<ExecutorJob> job) override { jobs_.submit(std::move(job)); }
  void shutdown(bool wait) override { jobs_.shutdown(wait); }

 private:
  SimExecutor& jobs_;
};

}  // namespace corio::detail::sim
