// A response is never answered, however ill-formed: a peer that answers
// errors in turn would otherwise loop with us for ever. (An ill-formed
// notification, or `{}`, is an invalid Request: jsonrpc_spec_test.cpp.)
#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

Coro<void> ill_formed_answers_get_no_answer() {
  Harness h;
  Session session(h.transport);
  session.on_request("ping", [](const json&, const RequestContext&) -> Coro<json> {
    co_return json::object();
  });
  corio::Task<void> server = corio::create_task(session.run());
  const std::vector<std::string> ignored = {
      R"({"jsonrpc": "2.0", "result": {}})",                        // a result without an id
      R"({"jsonrpc": "2.0", "id": null, "result": {}})",            // an id of null
      R"({"jsonrpc": "2.0", "id": 7, "result": {}, "error": {}})",  // both
      R"({"jsonrpc": "2.0", "id": 8})",                             // neither
      R"({"jsonrpc": "2.0", "id": 9, "error": "not an object"})",
      R"({"jsonrpc": "1.0", "id": 10, "result": {}})",
  };
  for (const std::string& line : ignored) h.send(line);
  h.send(R"({"jsonrpc": "2.0", "id": 1, "method": "ping"})");
  // The first thing that comes back is the pong: nothing before it.
  const json first = co_await h.next();
  EXPECT_EQ(first["id"], 1) << first.dump();
  EXPECT_EQ(first["result"], json::object()) << first.dump();
  h.to_server.close();
  co_await server;
}

TEST(SessionAnswers, IllFormedAnswersAreNeverAnswered) {
  run_test(ill_formed_answers_get_no_answer());
}

// In a batch too (2025-03-26 has batches): the one request there is
// answered, alone.
Coro<void> ill_formed_answers_in_a_batch() {
  Harness h;
  Session session(h.transport);
  session.accept_batches(true);
  session.on_request("ping", [](const json&, const RequestContext&) -> Coro<json> {
    co_return json::object();
  });
  corio::Task<void> server = corio::create_task(session.run());
  h.send(R"([{"jsonrpc": "2.0", "result": {}}, {"jsonrpc": "2.0", "id": null, "result": 1},)"
         R"( {"jsonrpc": "2.0", "id": 2, "method": "ping"}])");
  const json replies = co_await h.next();
  CO_ASSERT(replies.is_array());
  EXPECT_EQ(replies.size(), 1u) << replies.dump();
  EXPECT_EQ(replies[0]["id"], 2) << replies.dump();
  h.to_server.close();
  co_await server;
}

TEST(SessionAnswers, IllFormedAnswersInABatchAreNeverAnswered) {
  run_test(ill_formed_answers_in_a_batch());
}

}  // namespace
}  // namespace corio_mcp_test
