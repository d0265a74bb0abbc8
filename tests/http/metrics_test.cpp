// The Prometheus exposition of loop.stats(): the text for known stats, and a
// real scrape of a /metrics route over loopback whose numbers are the serving
// loop's own.
#include <corio/http/metrics.hpp>

#include <cctype>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

// The length of the metric name [a-z_]+ at the start of s.
std::size_t name_length(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && (std::islower(static_cast<unsigned char>(s[n])) || s[n] == '_')) ++n;
  return n;
}

// "# HELP name text" or "# TYPE name text". (By hand: <regex> trips g++ 12's
// -Wmaybe-uninitialized at -O1, the sanitizer builds' level.)
bool is_comment(std::string_view line) {
  if (!line.starts_with("# HELP ") && !line.starts_with("# TYPE ")) return false;
  line.remove_prefix(7);
  const std::size_t n = name_length(line);
  return n > 0 && line.size() > n + 1 && line[n] == ' ';
}

// "name value" or "name{quantile=\"0.5\"} value": the key and the value.
std::optional<std::pair<std::string, double>> sample_of(std::string_view line) {
  std::size_t key = name_length(line);
  if (key == 0) return std::nullopt;
  if (line.substr(key).starts_with("{quantile=\"")) {
    const std::size_t close = line.find("\"}", key);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view q = line.substr(key + 11, close - key - 11);
    if (q.empty() || q.find_first_not_of("0123456789.") != std::string_view::npos) return std::nullopt;
    key = close + 2;
  }
  if (key >= line.size() || line[key] != ' ') return std::nullopt;
  const std::string value(line.substr(key + 1));
  std::size_t used = 0;
  try {
    const double v = std::stod(value, &used);
    if (used != value.size()) return std::nullopt;
    return std::pair{std::string(line.substr(0, key)), v};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// name{labels} -> value, for every sample line; fails on a malformed line.
std::map<std::string, double> parse_samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (is_comment(line)) continue;
    const auto sample = sample_of(line);
    if (!sample) {
      ADD_FAILURE() << "not a Prometheus sample line: '" << line << "'";
      continue;
    }
    out[sample->first] = sample->second;
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
