/// \file
/// corio::http::prometheus_metrics / metrics_handler: the loop's counters
/// (loop.stats(), corio/loop_stats.hpp) in Prometheus' text exposition
/// format (version 0.0.4), for a /metrics route:
///
/// <!-- doc: body (corio::http::Server& server) -->
///     server.get("/metrics", corio::http::metrics_handler());
///
/// Each scrape answers with the stats of the loop serving that connection (a
/// server with several worker loops answers per worker). Metric names:
/// corio_loop_iterations_total, corio_loop_steps_total, corio_loop_ready,
/// corio_loop_timers, corio_loop_watched_fds, corio_loop_io_waits,
/// corio_tasks_alive, corio_tasks_created_total, corio_loop_lag_seconds
/// (gauges labelled quantile="0.5|0.9|0.99|1" over the recent window) with
/// corio_loop_lag_samples, corio_loop_slow_steps_total, corio_loop_stalls_total.
#pragma once

#include <string>

#include <corio/http/router.hpp>
#include <corio/loop_stats.hpp>

namespace corio {
class EventLoop;
}

namespace corio::http {

/// stats as Prometheus text, one HELP, TYPE and sample group per metric.
std::string prometheus_metrics(const LoopStats& stats);
/// prometheus_metrics(loop.stats()).
std::string prometheus_metrics(const EventLoop& loop);
/// A GET handler answering prometheus_metrics(get_running_loop()) as
/// text/plain; version=0.0.4.
Handler metrics_handler();

}  // namespace corio::http
