// Section 12: the tutorials' MCP server. The example nba-daily-brief server runs
// as a child process; this section is its client over the child's stdin and
// stdout, and prints every JSON-RPC line that goes either way.
#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <system_error>
#include <string>
#include <vector>

#include <corio/mcp/client.hpp>

#include "demo.hpp"

namespace corio_cli::demo {

namespace {

using corio::mcp::json;

// A transport that shows what passes through it, one line per message.
class ShowingTransport final : public corio::mcp::Transport {
 public:
  ShowingTransport(corio::mcp::Transport& inner, Demo& demo) : inner_(inner), demo_(demo) {}

  corio::Coro<std::optional<corio::mcp::Received>> receive() override {
    std::optional<corio::mcp::Received> in = co_await inner_.receive();
    if (in) show("<-", in->text);
    co_return in;
  }
  corio::Coro<void> send(std::string_view message, const json& related_request) override {
    show("->", message);
    co_await inner_.send(message, related_request);
  }

 private:
  void show(std::string_view arrow, std::string_view line) const {
    constexpr std::size_t kWidth = 104;
    const bool cut = line.size() > kWidth;
    demo_.out("{} {}{}", arrow, line.substr(0, kWidth), cut ? "..." : "");
  }
  corio::mcp::Transport& inner_;
  Demo& demo_;
};

corio::Coro<json> call(corio::mcp::Client& client, std::string tool, json args) {
  co_return co_await client.call_tool(std::move(tool), std::move(args));
}

}  // namespace

corio::Coro<> mcp_section(Demo& demo) {
  const std::string server_path = example_program("nba_daily_brief");
  if (server_path.empty()) {
    demo.explain("(skipped: example_nba_daily_brief is not built next to this corio binary)");
    co_return;
  }
  demo.explain(
      "An MCP host talks to a tool server over the server's stdin and stdout, one JSON-RPC\n"
      "message per line. Here corio starts the example server as a child process and is its\n"
      "client; each request on the server runs as its own task, so two slow calls overlap.");
  char articles[] = "/tmp/corio-demo-articles-XXXXXX";
  if (::mkdtemp(articles) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp");
  corio::SubprocessOptions pipes;
  pipes.in = corio::Redirect::pipe;
  pipes.out = corio::Redirect::pipe;
  pipes.err = corio::Redirect::devnull;
  const std::vector<std::string> args = {"--articles", articles};
  corio::Process proc = co_await corio::create_subprocess_exec(server_path, args, pipes);
  corio::mcp::StdioTransport pipe_transport(proc.out, proc.in);
  ShowingTransport transport(pipe_transport, demo);
  corio::mcp::Client client(transport, "corio-demo");

  const json init = co_await client.initialize();
  demo.expect(init.value("protocolVersion", "") == "2025-11-25", "protocol 2025-11-25 negotiated");
  const json tools = co_await client.list_tools();
  demo.expect(tools.size() == 3, "three tools listed");

  const json day = {{"target_date", "2026-11-29"}};
  const double start = demo.elapsed();
  const auto both = co_await corio::gather(call(client, "generate_brief", day),
                                           call(client, "generate_brief", day));
  const double took = demo.elapsed() - start;
  demo.out("two generate_brief calls (each 4 x 0.3 s of 'writing') at once: {:.2f} s, not 2.4", took);
  demo.expect(!std::get<0>(both).value("isError", true) && !std::get<1>(both).value("isError", true),
              "both calls succeed");
  demo.expect(took < 2.0, "the two slow calls overlapped on the server");

  const json escape = {{"title", "../../x"}, {"body_md", "pwned"}};
  const json refused = co_await client.call_tool("save_article", escape);
  demo.expect(refused.value("isError", false), "a title escaping the articles directory is refused");

  co_await client.close();
  proc.in.close();
  const int status = co_await proc.wait();
  demo.expect(status == 0, "the server exits cleanly at EOF");
  std::error_code ignored;
  std::filesystem::remove_all(articles, ignored);
  demo.elapsed_line("one client, one server process, every message one line of JSON-RPC");
}

}  // namespace corio_cli::demo
