// The answers of the inspection server (inspect.hpp): `ps`, `pstree` and
// `stats`, as text or as JSON lines (stats: one line, LoopStats' fields). The JSON is written by hand: the core
// layer does not link a JSON library for a few flat records.
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "inspect_server.hpp"
#include <corio/event_loop.hpp>
#include <corio/task_tree.hpp>

namespace corio::detail {
namespace {

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += ch;
    }
  }
  out += '"';
}

// A socket wait's fields, so a tool need not parse them out of "awaiting".
void append_socket_json(std::string& out, const AwaitedObject& a) {
  out += fmt::format(",\"fd\":{},\"write\":{},\"peer\":", a.fd, a.write);
  append_json_string(out, a.peer);
  out += ",\"local\":";
  append_json_string(out, a.local);
  out += fmt::format(",\"listening\":{}", a.listening);
  if (a.peer_pid) out += fmt::format(",\"peer_pid\":{}", *a.peer_pid);
}

// One task's record: the table's columns, the whole chain, and the ids of
// its awaiters (enough to build the tree).
void append_task_json(std::string& out, const FutureCallGraph& g) {
  out += fmt::format("{{\"id\":{},\"name\":", g.task.id());
  append_json_string(out, g.task.get_name());
  out += ",\"state\":";
  append_json_string(out, g.state);
  const bool suspended = g.state == "suspended";
  out += ",\"awaiting\":";
  append_json_string(out, suspended ? describe_awaiting(g.awaiting) : "");
  out += ",\"awaiting_kind\":";
  append_json_string(out, suspended ? g.awaiting.kind : "");
  if (suspended && g.awaiting.fd >= 0) append_socket_json(out, g.awaiting);
  out += ",\"stack\":[";
  for (std::size_t i = 0; i < g.call_stack.size(); ++i) {
    const FrameCallGraphEntry& f = g.call_stack[i];
    out += i == 0 ? "{\"function\":" : ",{\"function\":";
    append_json_string(out, f.function);
    out += ",\"file\":";
    append_json_string(out, f.file);
    out += fmt::format(",\"line\":{}}}", f.line);
  }
  out += "],\"awaited_by\":[";
  for (std::size_t i = 0; i < g.awaited_by.size(); ++i)
    out += fmt::format("{}{}", i == 0 ? "" : ",", g.awaited_by[i].task.id());
  out += "]}\n";
}

std::string tasks_json(const std::vector<FutureCallGraph>& graphs) {
  std::string out;
  for (const FutureCallGraph& g : graphs) append_task_json(out, g);
  return out;
}

struct StatsField {
  std::string_view name;
  std::string value;
  std::string_view unit;  // for the text form
};

// The counters in LoopStats' order, for both forms.
std::vector<StatsField> stats_fields(const LoopStats& st) {
  const auto count = [](auto n) { return std::to_string(n); };
  const auto seconds = [](double s) { return fmt::format("{:.6f}", s); };
  return {{"iterations", count(st.iterations), ""},
          {"ready", count(st.ready), ""},
          {"steps", count(st.steps), ""},
          {"timers", count(st.timers), ""},
          {"watched_fds", count(st.watched_fds), ""},
          {"io_waits", count(st.io_waits), ""},
          {"tasks_alive", count(st.tasks_alive), ""},
          {"tasks_created", count(st.tasks_created), ""},
          {"lag_samples", count(st.lag.samples), ""},
          {"lag_p50", seconds(st.lag.p50), " s"},
          {"lag_p90", seconds(st.lag.p90), " s"},
          {"lag_p99", seconds(st.lag.p99), " s"},
          {"lag_max", seconds(st.lag.max), " s"},
          {"slow_steps", count(st.slow_steps), ""},
          {"stalls", count(st.stalls), ""}};
}

std::string stats_answer(const LoopStats& st, bool json) {
  std::string out;
  for (const StatsField& f : stats_fields(st)) {
    if (json) {
      out += fmt::format("{}\"{}\":{}", out.empty() ? "{" : ",", f.name, f.value);
    } else {
      out += fmt::format("{:<14} {}{}\n", f.name, f.value, f.unit);
    }
  }
  return json ? out + "}\n" : out;
}

// A request echoed in an error: the peer's bytes, printable and short.
std::string quoted(std::string_view request) {
  std::string s;
  for (const char ch : request.substr(0, 40)) s += ch >= 0x20 && ch < 0x7f ? ch : '?';
  return s;
}

}  // namespace

std::string inspect_answer(EventLoop& loop, std::string_view request) {
  const std::size_t space = request.find(' ');
  const std::string_view command = request.substr(0, space);
  const std::string_view format =
      space == std::string_view::npos ? std::string_view() : request.substr(space + 1);
  if (!format.empty() && format != "json") {
    return fmt::format("error: unknown format '{}' (json, or nothing for text)\n", quoted(format));
  }
  const bool json = !format.empty();
  if (command == "ps" || command == "pstree") {
    const std::vector<FutureCallGraph> graphs = capture_all_call_graphs(loop);
    if (json) return tasks_json(graphs);
    return command == "ps" ? format_task_table(graphs) : format_task_tree(graphs);
  }
  if (command == "stats") return stats_answer(loop.stats(), json);
  return fmt::format("error: unknown request '{}' (ps, pstree or stats, then json or nothing)\n",
                     quoted(command));
}

}  // namespace corio::detail
