// The Python tutorial's daily 08:00 NBA brief, without waking up every minute.
//
// The Python original polls:
//
//   async def run_scheduler():
//       while True:
//           now = datetime.now()
//           if now.hour == 8 and now.minute == 0:
//               await daily_brief_task()
//           await asyncio.sleep(60)
//
// which can run twice (a task shorter than a minute) or never (a loop that
// was busy during that minute). corio::run_daily sleeps until the next
// 08:00 local time, runs the job once, and computes the next 08:00 (DST
// included; see corio/daily.hpp).
//
// Each run starts the nba-daily-brief MCP server as a subprocess and speaks
// MCP to it over its stdin/stdout: get_nba_news, generate_brief (with
// progress), save_article.
//
// Usage: example_daily_brief [--now] [--at HH:MM] [--articles DIR]
//   --now   one brief, at once, then exit (the demo runs this)
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include <corio/corio.hpp>
#include <corio/mcp/client.hpp>

using corio::Coro;
using corio::mcp::json;

namespace {

struct Options {
  bool now = false;
  int hour = 8, minute = 0;
  std::string articles = "articles";
};

std::string clock_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

Coro<void> daily_brief_task(const Options& opts) {
  std::printf("[%s] generating the NBA brief...\n", clock_now().c_str());
  corio::SubprocessOptions pipes;
  pipes.in = corio::Redirect::pipe;
  pipes.out = corio::Redirect::pipe;
  const std::vector<std::string> args = {"--articles", opts.articles};
  corio::Process server = co_await corio::create_subprocess_exec(CORIO_EXAMPLE_NBA_SERVER, args, pipes);
  corio::mcp::StdioTransport transport(server.out, server.in);
  corio::mcp::Client client(transport, "daily-brief");
  client.session().on_notification("notifications/progress", [](const json& p) {
    std::printf("  progress %g/%g %s\n", p["progress"].get<double>(), p.value("total", 0.0),
                p.value("message", std::string()).c_str());
  });
  co_await client.initialize();
  const json today = {{"target_date", "today"}};
  const json news = co_await client.call_tool("get_nba_news", today);
  std::printf("%s", news["content"][0]["text"].get<std::string>().c_str());
  const json brief = co_await client.call_tool("generate_brief", today, "brief");
  const json article = {{"title", brief["structuredContent"]["title"]},
                        {"body_md", brief["structuredContent"]["body_md"]}};
  const json saved = co_await client.call_tool("save_article", article);
  std::printf("  %s\n", saved["content"][0]["text"].get<std::string>().c_str());
  co_await client.close();
  server.in.close();
  const int status = co_await server.wait();
  std::printf("[%s] brief done (server exited with %d)\n", clock_now().c_str(), status);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--now") {
      o.now = true;
    } else if (a == "--at" && i + 1 < argc && std::sscanf(argv[i + 1], "%d:%d", &o.hour, &o.minute) == 2) {
      ++i;
    } else if (a == "--articles" && i + 1 < argc) {
      o.articles = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--now] [--at HH:MM] [--articles DIR]\n", argv[0]);
      std::exit(2);
    }
  }
  return o;
}

Coro<void> scheduler(Options opts) {
  if (opts.now) {
    co_await daily_brief_task(opts);
    co_return;
  }
  std::printf("[%s] next brief at %02d:%02d local time; sleeping until then\n", clock_now().c_str(),
              opts.hour, opts.minute);
  auto job = [&opts]() -> Coro<void> { co_await daily_brief_task(opts); };
  co_await corio::run_daily(opts.hour, opts.minute, job);
}

}  // namespace

int main(int argc, char** argv) { return corio::run_main(scheduler(parse_args(argc, argv))); }
