// Workers (see server_workers.hpp).
#include <csignal>

#include <corio/run.hpp>
#include <corio/task.hpp>
#include <corio/to_thread.hpp>

#include "http/server/server_workers.hpp"

namespace corio::http::detail {

namespace {

Coro<void> worker_main(Workers::Worker* w, std::shared_ptr<const ServerShared> shared,
                       std::string host, std::uint16_t port) {
  auto server = std::make_shared<LoopServer>(std::move(shared));
  co_await server->start(std::move(host), port, true);
  {
    const std::lock_guard lock(w->mutex);
    w->loop = &get_running_loop();
    w->server = server;
  }
  w->listening.set_value();
  co_await server->wait_stopped();
  const std::lock_guard lock(w->mutex);
  w->loop = nullptr;
  w->server.reset();
}

// Signals are the main loop's (run_until_signal): a process-directed SIGINT
// must not land in a worker, whose default action would end the process.
void block_async_signals() {
  sigset_t set;
  sigfillset(&set);
  for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigdelset(&set, fault);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void run_worker(Workers::Worker* w, std::shared_ptr<const ServerShared> shared, std::string host,
                std::uint16_t port) {
  block_async_signals();
  std::exception_ptr error;
  try {
    corio::run(worker_main(w, std::move(shared), std::move(host), port));
    return;
  } catch (...) {
    error = std::current_exception();
    const std::lock_guard lock(w->mutex);
    w->loop = nullptr;
  }
  try {
    w->listening.set_exception(error);
  } catch (const std::future_error&) {
    // It failed after it was listening: start() is over, nobody to tell.
  }
}

}  // namespace

Workers::Workers(std::shared_ptr<const ServerShared> shared, std::string host, std::uint16_t port,
                 int count)
    : shared_(std::move(shared)), host_(std::move(host)), port_(port) {
  for (int i = 0; i < count; ++i) workers_.push_back(std::make_unique<Worker>());
}

Workers::~Workers() {
  stop_now();
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
}

Coro<void> Workers::start() {
  std::vector<std::shared_future<void>> ready;
  for (auto& w : workers_) {
    ready.push_back(w->listening.get_future().share());
    w->thread = std::thread(run_worker, w.get(), shared_, host_, port_);
  }
  for (const std::shared_future<void>& f : ready) {
    auto wait = [f] { f.get(); };
    co_await corio::to_thread(wait);
  }
}

void Workers::post(std::function<void(LoopServer&)> fn) {
  for (auto& w : workers_) {
    const std::lock_guard lock(w->mutex);
    if (!w->loop) continue;
    std::shared_ptr<LoopServer> server = w->server;
    w->loop->call_soon_threadsafe([server, fn] { fn(*server); });
  }
}

void Workers::stop_now() {
  post([](LoopServer& s) { s.close(); });
}

void Workers::begin_shutdown(std::chrono::milliseconds deadline) {
  post([deadline](LoopServer& s) { create_task(s.shutdown(deadline)); });
}

Coro<void> Workers::join() {
  auto join_all = [this] {
    for (auto& w : workers_) {
      if (w->thread.joinable()) w->thread.join();
    }
  };
  co_await corio::to_thread(join_all);
}

}  // namespace corio::http::detail
