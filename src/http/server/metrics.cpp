// The Prometheus exposition of loop.stats() (corio/http/metrics.hpp).
#include <corio/http/metrics.hpp>

#include <fmt/format.h>

#include <corio/event_loop.hpp>
#include <corio/http/request.hpp>
#include <corio/http/response.hpp>

namespace corio::http {
namespace {

template <class V>
void metric(std::string& out, const char* name, const char* type, const char* help, V value) {
  fmt::format_to(std::back_inserter(out), "# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3}\n", name, help,
                 type, value);
}

void lag(std::string& out, const LagPercentiles& lag) {
  out +=
      "# HELP corio_loop_lag_seconds How late the loop ran due timers, percentiles of the recent "
      "window.\n# TYPE corio_loop_lag_seconds gauge\n";
  const std::pair<const char*, double> quantiles[] = {
      {"0.5", lag.p50}, {"0.9", lag.p90}, {"0.99", lag.p99}, {"1", lag.max}};
  for (const auto& [q, v] : quantiles)
    fmt::format_to(std::back_inserter(out), "corio_loop_lag_seconds{{quantile=\"{}\"}} {}\n", q, v);
  metric(out, "corio_loop_lag_samples", "gauge", "Lag samples in the recent window.", lag.samples);
}

}  // namespace

std::string prometheus_metrics(const LoopStats& s) {
  std::string out;
  metric(out, "corio_loop_iterations_total", "counter", "Event loop iterations.", s.iterations);
  metric(out, "corio_loop_steps_total", "counter", "Callbacks and task steps run.", s.steps);
  metric(out, "corio_loop_ready", "gauge", "Callbacks and task steps queued to run.", s.ready);
  metric(out, "corio_loop_timers", "gauge", "Timers pending.", s.timers);
  metric(out, "corio_loop_watched_fds", "gauge", "File descriptors with a reader or writer.",
         s.watched_fds);
  metric(out, "corio_loop_io_waits", "gauge", "Socket operations waiting for readiness.",
         s.io_waits);
  metric(out, "corio_tasks_alive", "gauge", "Pending tasks.", s.tasks_alive);
  metric(out, "corio_tasks_created_total", "counter", "Tasks created.", s.tasks_created);
  lag(out, s.lag);
  metric(out, "corio_loop_slow_steps_total", "counter",
         "Steps past slow_callback_duration (debug mode).", s.slow_steps);
  metric(out, "corio_loop_stalls_total", "counter", "Steps the stall detector caught.", s.stalls);
  return out;
}

std::string prometheus_metrics(const EventLoop& loop) { return prometheus_metrics(loop.stats()); }

Handler metrics_handler() {
  return [](Request&) -> Coro<Response> {  // no captures: nothing to dangle
    co_return Response::text(prometheus_metrics(get_running_loop()), 200,
                             "text/plain; version=0.0.4; charset=utf-8");
  };
}

}  // namespace corio::http
