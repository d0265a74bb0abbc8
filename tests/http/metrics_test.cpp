// The Prometheus exposition of loop.stats(): the text for known stats, and a
// real scrape of a /metrics route over loopback whose numbers are the serving
// loop's own.
#include <corio/http/metrics.hpp>

#include <map>
#include <regex>
#include <sstream>

#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

// name{labels} -> value, for every sample line; fails on a malformed line.
std::map<std::string, double> parse_samples(const std::string& text) {
  static const std::regex sample(R"(^([a-z_]+(\{quantile="[0-9.]+"\})?) (\S+)$)");
  static const std::regex comment(R"(^# (HELP|TYPE) [a-z_]+ .+$)");
  std::map<std::string, double> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, comment)) continue;
    if (!std::regex_match(line, m, sample)) {
      ADD_FAILURE() << "not a Prometheus sample line: '" << line << "'";
      continue;
    }
    out[m[1].str()] = std::stod(m[3].str());
  }
  return out;
}

TEST(Metrics, KnownStatsGiveTheirSamples) {
  corio::LoopStats s;
  s.iterations = 12;
  s.steps = 40;
  s.ready = 3;
  s.timers = 2;
  s.watched_fds = 5;
  s.io_waits = 1;
  s.tasks_alive = 4;
  s.tasks_created = 9;
  s.lag = {100, 0.001, 0.004, 0.02, 0.25};
  s.slow_steps = 6;
  s.stalls = 7;
  const std::string text = corio::http::prometheus_metrics(s);
  EXPECT_NE(text.find("# TYPE corio_loop_iterations_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE corio_tasks_alive gauge\n"), std::string::npos) << text;
  const std::map<std::string, double> m = parse_samples(text);
  const std::map<std::string, double> want = {
      {"corio_loop_iterations_total", 12}, {"corio_loop_steps_total", 40},
      {"corio_loop_ready", 3},             {"corio_loop_timers", 2},
      {"corio_loop_watched_fds", 5},       {"corio_loop_io_waits", 1},
      {"corio_tasks_alive", 4},            {"corio_tasks_created_total", 9},
      {"corio_loop_lag_samples", 100},     {"corio_loop_lag_seconds{quantile=\"0.5\"}", 0.001},
      {"corio_loop_lag_seconds{quantile=\"0.9\"}", 0.004},
      {"corio_loop_lag_seconds{quantile=\"0.99\"}", 0.02},
      {"corio_loop_lag_seconds{quantile=\"1\"}", 0.25},
      {"corio_loop_slow_steps_total", 6},  {"corio_loop_stalls_total", 7}};
  EXPECT_EQ(m, want) << text;
}

Coro<void> idle_task(corio::Event* stop) { co_await stop->wait(); }

Coro<void> scrape_body() {
  Server server(quiet());
  server.get("/metrics", corio::http::metrics_handler());
  co_await server.start("127.0.0.1", 0);
  corio::Event stop;
  corio::Task<void> extra = corio::create_task(idle_task(&stop), "extra");
  corio::EventLoop& loop = corio::get_running_loop();
  const corio::LoopStats before = loop.stats();
  Reply r = co_await exchange(server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  const corio::LoopStats after = loop.stats();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.get_or("Content-Type", ""), "text/plain; version=0.0.4; charset=utf-8");
  const std::map<std::string, double> m = parse_samples(r.body);
  EXPECT_EQ(m.size(), 15u) << r.body;
  // Taken while the request ran: between this task's two snapshots.
  EXPECT_GT(m.at("corio_loop_iterations_total"), static_cast<double>(before.iterations));
  EXPECT_LT(m.at("corio_loop_iterations_total"), static_cast<double>(after.iterations));
  EXPECT_GE(m.at("corio_tasks_created_total"), static_cast<double>(before.tasks_created));
  EXPECT_GE(m.at("corio_tasks_alive"), 3.0) << "this task, 'extra' and the connection's";
  EXPECT_GE(m.at("corio_loop_io_waits"), 1.0) << "the server's accept at least";
  stop.set();
  co_await extra;
  co_await server.shutdown(1s);
}

TEST(Metrics, AScrapeOverLoopbackServesTheLoopsStats) { run_bounded(scrape_body()); }

}  // namespace
}  // namespace corio_http_test
