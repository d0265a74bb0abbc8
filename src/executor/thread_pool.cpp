// ThreadPoolExecutor (see executor.hpp).
#include <pthread.h>

#include <algorithm>
#include <csignal>

#include <corio/detail/runtime_threads.hpp>
#include <corio/errors.hpp>
#include <corio/executor.hpp>

namespace corio {

namespace {
std::size_t default_workers() {
  return std::min<std::size_t>(32, std::max(1u, std::thread::hardware_concurrency()) + 4);
}

// Blocks, for its lifetime, the asynchronous signals in the calling thread, so
// that a thread created meanwhile starts with them blocked (no window before
// it could block them itself). A signal sent to the process goes to some
// thread that does not block it, and a loop's signalfd only sees it if no
// thread does (src/core/signals.hpp): workers must never be that thread.
// Faults stay unblocked: a blocked SIGSEGV kills without a crash handler.
class BlockAsyncSignals {
 public:
  BlockAsyncSignals() {
    sigset_t set;
    sigfillset(&set);
    for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigdelset(&set, fault);
    ::pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  BlockAsyncSignals(const BlockAsyncSignals&) = delete;
  BlockAsyncSignals& operator=(const BlockAsyncSignals&) = delete;
  ~BlockAsyncSignals() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

}  // namespace

ThreadPoolExecutor::ThreadPoolExecutor(std::size_t max_workers)
    : max_workers_(max_workers ? max_workers : default_workers()) {}

ThreadPoolExecutor::~ThreadPoolExecutor() { shutdown(true); }

std::size_t ThreadPoolExecutor::thread_count() const {
  std::lock_guard lock(mutex_);
  return threads_.size();
}

std::size_t ThreadPoolExecutor::idle_threads() const {
  std::lock_guard lock(mutex_);
  return idle_;
}

void ThreadPoolExecutor::submit(std::unique_ptr<ExecutorJob> job) {
  std::unique_lock lock(mutex_);
  if (shutdown_) throw RuntimeError("cannot schedule new work after shutdown");
  jobs_.push_back(std::move(job));
  // A new thread only when every started one is busy: a burst of jobs on an
  // idle pool does not spawn threads it does not need.
  if (jobs_.size() > idle_ && threads_.size() < max_workers_) {
    try {
      const BlockAsyncSignals inherited_by_the_worker;
      threads_.emplace_back([this] { worker(); });
    } catch (...) {
      if (threads_.empty()) {  // nobody would ever run the job
        jobs_.pop_back();
        throw;
      }
    }
  }
  lock.unlock();
  cv_.notify_one();
}

void ThreadPoolExecutor::worker() noexcept {
  const detail::RuntimeThread counted;
  std::unique_lock lock(mutex_);
  for (;;) {
    ++idle_;
    cv_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
    --idle_;
    if (jobs_.empty()) return;  // shut down and drained
    std::unique_ptr<ExecutorJob> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    ExecutorJob* j = job.get();
    j->run(std::move(job));
    lock.lock();
  }
}

void ThreadPoolExecutor::shutdown(bool wait) {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    shutdown_ = true;
    if (wait) threads.swap(threads_);
  }
  cv_.notify_all();
  for (std::thread& t : threads) t.join();
}

}  // namespace corio
