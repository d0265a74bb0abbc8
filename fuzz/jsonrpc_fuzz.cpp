// libFuzzer target for the JSON-RPC message parser (parse_json +
// parse_message), what every line an MCP server reads goes through.
//
// Invariants: nothing but RpcError escapes; an accepted message has the
// shape its kind promises (ids are strings or integers, requests and
// notifications have a method, a response has exactly one of result and
// error); and an accepted message, rebuilt with the make_* builders and
// parsed again, is the same kind with the same id and method. And the
// depth limit holds: an accepted value nests at most JsonLimits::max_depth
// deep (measured without recursion), so copying and serialising it, which
// nlohmann does recursively, cannot overflow the stack.
//
// max_len: libFuzzer's default is 4096 bytes (or the longest seed), too
// short to nest past the limit in objects or reach the size limits;
// LLVMFuzzerInitialize makes it 1 MiB unless the command line says.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include <corio/mcp/jsonrpc.hpp>

#include "fuzz_check.hpp"

namespace {

using namespace corio::mcp;

json rebuilt(const Message& m) {
  switch (m.kind) {
    case Message::Kind::request:
      return make_request(m.id, m.method, m.params);
    case Message::Kind::notification:
      return make_notification(m.method, m.params);
    case Message::Kind::response:
      return make_response(m.id, m.result);
    case Message::Kind::error:
      return make_error(m.id, m.error["code"].get<int>(), m.error["message"].get<std::string>(),
                        m.error.value("data", json()));
  }
  return nullptr;
}

void check_message(const json& j) {
  Message m;
  try {
    m = parse_message(j);
  } catch (const InvalidMessage& e) {
    FUZZ_CHECK(e.code() == error_code::invalid_request);
    FUZZ_CHECK(e.id().is_null() || e.id().is_string() || e.id().is_number_integer());
    return;
  }
  const bool call = m.kind == Message::Kind::request || m.kind == Message::Kind::notification;
  FUZZ_CHECK(!call || !m.method.empty() || j.at("method") == "");
  FUZZ_CHECK(m.kind != Message::Kind::request || m.id.is_string() || m.id.is_number_integer());
  FUZZ_CHECK(m.kind != Message::Kind::notification || m.id.is_null());
  FUZZ_CHECK(m.params.is_null() || m.params.is_object() || m.params.is_array());
  const Message again = parse_message(rebuilt(m));
  FUZZ_CHECK(again.kind == m.kind);
  FUZZ_CHECK(again.id == m.id);
  FUZZ_CHECK(again.method == m.method);
}

// How deep j nests (a scalar is 0), with an explicit stack.
std::size_t depth_of(const json& j) {
  std::size_t deepest = 0;
  std::vector<std::pair<const json*, std::size_t>> todo{{&j, 0}};
  while (!todo.empty()) {
    const auto [v, d] = todo.back();
    todo.pop_back();
    if (!v->is_structured()) continue;
    deepest = std::max(deepest, d + 1);
    for (const json& child : *v) todo.emplace_back(&child, d + 1);
  }
  return deepest;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp((*argv)[i], "-max_len=", 9) == 0) return 0;
  }
  // A new argv that lives as long as the process, as libFuzzer needs it.
  static std::vector<char*> args;
  static char max_len[] = "-max_len=1048576";
  args.assign(*argv, *argv + *argc);
  args.insert(args.begin() + 1, max_len);
  args.push_back(nullptr);
  *argc += 1;
  *argv = args.data();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  json j;
  try {
    j = parse_json(text);
  } catch (const RpcError& e) {
    FUZZ_CHECK(e.code() == error_code::parse_error);
    return 0;
  }
  FUZZ_CHECK(depth_of(j) <= corio::http::JsonLimits{}.max_depth);
  if (j.is_array()) {
    for (const json& item : j) check_message(item);
  } else {
    check_message(j);
  }
  // What the session sends back must always serialise, whatever came in.
  (void)j.dump(-1, ' ', false, json::error_handler_t::replace);
  return 0;
}
