// The Python tutorial's MCP server, for real: "nba-daily-brief" over stdio, or over
// Streamable HTTP with --http.
//
// The Python original (the mcp SDK):
//
//   SERVER = Server("nba-daily-brief")
//   @SERVER.list_tools()
//   async def list_tools(): return [get_nba_news_tool, save_article_tool]
//   @SERVER.call_tool()
//   async def call_tool(name, arguments):
//       if name == "get_nba_news": result = await call_get_nba_news(arguments)
//       elif name == "save_article": result = await call_save_article(arguments)
//       return [TextContent(type="text", text=result)]
//   async with stdio_server() as (read, write):
//       await SERVER.run(read, write, SERVER.create_initialization_options())
//
// Tools:
//   get_nba_news(target_date)   headlines for "today" or a YYYY-MM-DD date, from
//                               the news file shipped with the example (no network)
//   generate_brief(target_date) a Markdown brief of those headlines, written
//                               slowly on purpose (0.3 s per headline) with
//                               progress notifications: slow calls overlap,
//                               and a cancelled one stops
//   save_article(title, body_md) writes <articles>/<title>.md; a title that is
//                               not a plain file name (../../x) is refused
//
// Usage: example_nba_daily_brief [--news FILE] [--articles DIR] [--http PORT]
// stdout carries only the protocol; the server logs to stderr. --http serves
// http://127.0.0.1:PORT/mcp instead (PORT 0: any free port, said on stderr)
// until Ctrl-C.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <iomanip>
#include <sstream>
#include <string>

#include <corio/corio.hpp>
#include <corio/http/server.hpp>
#include <corio/mcp/server.hpp>
#include <corio/mcp/streamable_http.hpp>

using corio::Coro;
using corio::mcp::Context;
using corio::mcp::json;
using corio::mcp::ToolResult;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

struct Config {
  fs::path news = CORIO_EXAMPLE_NBA_NEWS;  // set by examples/mcp/CMakeLists.txt
  fs::path articles = "articles";
  std::optional<std::uint16_t> http_port;
};

std::string today() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[11];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

// "today" or a well-formed YYYY-MM-DD, as a date; nullopt otherwise.
std::optional<std::string> resolve_date(const std::string& d) {
  if (d == "today") return today();
  std::tm tm{};
  std::istringstream in(d);
  in >> std::get_time(&tm, "%Y-%m-%d");
  if (in.fail() || !in.eof() || d.size() != 10) return std::nullopt;
  return d;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The headlines of a date: its own, else the file's "*" sample list.
Coro<json> headlines(const Config& cfg, const std::string& date) {
  const std::string text = co_await corio::to_thread(read_file, cfg.news);  // file I/O off the loop
  const json all = json::parse(text);
  co_return all.contains(date) ? all[date] : all.value("*", json::array());
}

json date_schema() {
  return json::parse(R"({
    "type": "object",
    "properties": {"target_date": {"type": "string", "description": "\"today\" or a date, YYYY-MM-DD"}},
    "required": ["target_date"]
  })");
}

Coro<ToolResult> get_nba_news(const Config& cfg, const json& args, Context& ctx) {
  const auto date = resolve_date(args["target_date"].get<std::string>());
  if (!date) co_return ToolResult::error("target_date must be \"today\" or YYYY-MM-DD");
  co_await ctx.info("reading the news for " + *date);
  const json items = co_await headlines(cfg, *date);
  std::string text = "NBA news for " + *date + ":\n";
  for (const json& n : items) {
    text += "- " + n["team"].get<std::string>() + ": " + n["headline"].get<std::string>() + "\n";
  }
  ToolResult r = ToolResult::text(text);
  r.structured_content = {{"date", *date}, {"items", items}};
  co_return r;
}

Coro<ToolResult> generate_brief(const Config& cfg, const json& args, Context& ctx) {
  const auto date = resolve_date(args["target_date"].get<std::string>());
  if (!date) co_return ToolResult::error("target_date must be \"today\" or YYYY-MM-DD");
  const json items = co_await headlines(cfg, *date);
  std::string body = "# NBA daily brief, " + *date + "\n";
  const double total = static_cast<double>(items.size());
  double done = 0;
  for (const json& n : items) {
    co_await corio::sleep(300ms);  // "writing": a cancelled call stops here
    body += "\n## " + n["headline"].get<std::string>() + "\n\n" + n["summary"].get<std::string>() + "\n";
    co_await ctx.report_progress(++done, total, n["team"].get<std::string>());
  }
  ToolResult r = ToolResult::text(body);
  r.structured_content = {{"title", "NBA brief " + *date}, {"body_md", body}};
  co_return r;
}

// Why title cannot name a file directly under the articles directory, or
// nullopt if it can: no separators, no dot files or "..", no control
// characters, not empty, at most 100 bytes.
std::optional<std::string> bad_title(const std::string& title) {
  if (title.empty() || title.size() > 100) return "a title has 1 to 100 bytes";
  if (title.find_first_of("/\\") != std::string::npos) return "a title cannot contain / or \\";
  if (title.front() == '.') return "a title cannot start with a dot";
  for (unsigned char c : title) {
    if (c < 0x20 || c == 0x7f) return "a title cannot contain control characters";
  }
  return std::nullopt;
}

Coro<ToolResult> save_article(const Config& cfg, const json& args, Context& ctx) {
  const std::string title = args["title"].get<std::string>();
  if (const auto why = bad_title(title)) co_return ToolResult::error("refused title: " + *why);
  const fs::path path = cfg.articles / (title + ".md");
  const std::string body = args["body_md"].get<std::string>();
  auto write = [dir = cfg.articles, path, body] {
    fs::create_directories(dir);
    // Write aside, then rename: a reader never sees half an article.
    const fs::path tmp = path.string() + ".tmp";
    std::ofstream(tmp, std::ios::binary | std::ios::trunc) << body;
    fs::rename(tmp, path);
  };
  co_await corio::to_thread(write);  // exceptions come back as the tool's isError
  co_await ctx.info("saved " + path.string());
  co_return ToolResult::text("saved " + path.string() + " (" + std::to_string(body.size()) + " bytes)");
}

Config parse_args(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--news") {
      cfg.news = argv[i + 1];
    } else if (flag == "--articles") {
      cfg.articles = argv[i + 1];
    } else if (flag == "--http") {
      cfg.http_port = static_cast<std::uint16_t>(std::stoul(argv[i + 1]));
    } else {
      std::fprintf(stderr, "usage: %s [--news FILE] [--articles DIR] [--http PORT]\n", argv[0]);
      std::exit(2);
    }
  }
  return cfg;
}

// corio::mcp::serve_streamable_http(server, host, port) is the one-line
// form; spelled out here to say the port chosen for --http 0.
corio::Coro<void> serve_http(corio::mcp::Server& server, std::uint16_t port) {
  corio::http::Server http;
  corio::mcp::StreamableHttp endpoint(server);
  endpoint.mount(http);
  co_await http.start("127.0.0.1", port);
  std::fprintf(stderr, "nba-daily-brief: serving MCP on http://127.0.0.1:%u/mcp\n", http.port());
  co_await http.serve_forever();
}

}  // namespace

int main(int argc, char** argv) {
  const Config cfg = parse_args(argc, argv);
  corio::mcp::Server server("nba-daily-brief", "1.0.0",
                            "NBA headlines by date, a Markdown brief of them, and saving articles.");
  server.add_tool("get_nba_news", "NBA headlines for a date", date_schema(),
                  [&cfg](const json& args, Context& ctx) { return get_nba_news(cfg, args, ctx); });
  server.add_tool("generate_brief", "Write a Markdown brief of a date's NBA news (slow; reports progress)",
                  date_schema(),
                  [&cfg](const json& args, Context& ctx) { return generate_brief(cfg, args, ctx); });
  server.add_tool("save_article", "Save a Markdown article under the articles directory",
                  json::parse(R"({
                    "type": "object",
                    "properties": {"title": {"type": "string", "minLength": 1, "maxLength": 100},
                                   "body_md": {"type": "string"}},
                    "required": ["title", "body_md"]
                  })"),
                  [&cfg](const json& args, Context& ctx) { return save_article(cfg, args, ctx); });
  if (cfg.http_port) return corio::run_main(serve_http(server, *cfg.http_port));
  std::fprintf(stderr, "nba-daily-brief: serving MCP on stdio (news: %s)\n", cfg.news.c_str());
  return corio::run_main(server.run_stdio());
}
