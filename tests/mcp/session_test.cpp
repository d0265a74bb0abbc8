// Session over real pipes (StdioTransport on connect_read_pipe /
// connect_write_pipe, as a server over stdio runs): malformed input of
// every kind is answered and the session lives on; requests run
// concurrently and can be cancelled; batches follow accept_batches; EOF
// waits for the requests still running.
#include <set>

#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

json ping(int id) { return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}}; }

Session::RequestHandler empty_result() {
  return [](const json&, const RequestContext&) -> Coro<json> { co_return json::object(); };
}


Coro<void> malformed_inputs_are_answered() {
  Harness h;
  Session session(h.transport);
  session.on_request("ping", empty_result());
  corio::Task<void> server = corio::create_task(session.run());
  struct Case {
    std::string line;
    int code;
    json id;
  };
  const std::vector<Case> cases = {
      {"this is not json", code::parse_error, nullptr},
      {"[]", code::invalid_request, nullptr},
      {"[" + ping(1).dump() + "]", code::invalid_request, nullptr},  // batches rejected
      {"\"just a string\"", code::invalid_request, nullptr},
      {R"({"id": 2, "method": "ping"})", code::invalid_request, 2},
      {R"({"jsonrpc": "2.0", "id": 3, "method": 42})", code::invalid_request, 3},
      {R"({"jsonrpc": "2.0", "id": 4, "method": "notifications/initialized"})", code::invalid_request, 4},
      {R"({"jsonrpc": "2.0", "id": 5, "method": "no/such/method"})", code::method_not_found, 5},
      {std::string(2000, ' ') + "{}", code::invalid_request, nullptr},  // over 1024 bytes
  };
  for (const Case& c : cases) {
    h.send(c.line);
    const json reply = co_await h.next();
    EXPECT_EQ(reply["error"]["code"], c.code) << c.line.substr(0, 80);
    EXPECT_EQ(reply["id"], c.id) << c.line.substr(0, 80);
  }
  // Ignored, without an answer: an answer to nothing we asked, an unknown
  // notification, blank lines. Then the session still serves.
  h.send(R"({"jsonrpc": "2.0", "id": 99, "result": {}})");
  h.send(R"({"jsonrpc": "2.0", "method": "notifications/unknown"})");
  h.send("");
  h.send(ping(6).dump());
  const json pong = co_await h.next();
  EXPECT_EQ(pong["id"], 6);
  EXPECT_EQ(pong["result"], json::object());
  h.to_server.close();
  co_await server;
}

TEST(Session, EveryMalformedInputIsAnsweredAndTheSessionLivesOn) {
  run_test(malformed_inputs_are_answered());
}

Coro<void> handler_errors_become_answers() {
  Harness h;
  Session session(h.transport);
  session.on_request("bad_params", [](const json&, const RequestContext&) -> Coro<json> {
    throw corio::mcp::RpcError(code::invalid_params, "x must be a number", {{"field", "x"}});
    co_return nullptr;
  });
  session.on_request("boom", [](const json&, const RequestContext&) -> Coro<json> {
    throw std::runtime_error("the tool broke");
    co_return nullptr;
  });
  corio::Task<void> server = corio::create_task(session.run());
  h.send(R"({"jsonrpc": "2.0", "id": "a", "method": "bad_params"})");
  json r = co_await h.next();
  EXPECT_EQ(r["id"], "a");
  EXPECT_EQ(r["error"]["code"], code::invalid_params);
  EXPECT_EQ(r["error"]["data"]["field"], "x");
  h.send(R"({"jsonrpc": "2.0", "id": "b", "method": "boom"})");
  r = co_await h.next();
  EXPECT_EQ(r["error"]["code"], code::internal_error);
  EXPECT_EQ(r["error"]["message"], "the tool broke");
  h.to_server.close();
  co_await server;
}

TEST(Session, HandlerErrorsBecomeErrorAnswers) { run_test(handler_errors_become_answers()); }

// "first" can only finish once "second" has run: if requests were served
// one after another, this would never answer (and the test times out).
Coro<void> requests_overlap() {
  Harness h;
  Session session(h.transport);
  corio::Event second_ran;
  session.on_request("first", [&](const json&, const RequestContext&) -> Coro<json> {
    co_await second_ran.wait();
    co_return "first";
  });
  session.on_request("second", [&](const json&, const RequestContext&) -> Coro<json> {
    second_ran.set();
    co_return "second";
  });
  corio::Task<void> server = corio::create_task(session.run());
  h.send(R"({"jsonrpc": "2.0", "id": 1, "method": "first"})");
  h.send(R"({"jsonrpc": "2.0", "id": 2, "method": "second"})");
  EXPECT_EQ((co_await h.next())["result"], "second");
  EXPECT_EQ((co_await h.next())["result"], "first");
  h.to_server.close();
  co_await server;
}

TEST(Session, EachRequestRunsAsItsOwnTask) { run_test(requests_overlap()); }

// At max_in_flight requests running, the session stops reading: the third
// request is read but not started (nor the two after it read) until one of
// the two ends.
Coro<void> in_flight_is_capped() {
  Harness h;
  Session session(h.transport);
  session.max_in_flight(2);
  corio::Event release;
  int started = 0;
  session.on_request("slow", [&](const json&, const RequestContext&) -> Coro<json> {
    ++started;
    co_await release.wait();
    co_return "done";
  });
  corio::Task<void> server = corio::create_task(session.run());
  for (int id = 1; id <= 5; ++id)
    h.send(R"({"jsonrpc": "2.0", "id": )" + std::to_string(id) + R"(, "method": "slow"})");
  const std::function<bool()> two_started = [&] { return started == 2; };
  CO_ASSERT(co_await eventually(two_started));
  co_await corio::sleep(50ms);  // the reader has had every chance to take more
  EXPECT_EQ(started, 2);
  release.set();
  for (int i = 0; i < 5; ++i) EXPECT_EQ((co_await h.next())["result"], "done");
  EXPECT_EQ(started, 5);
  h.to_server.close();
  co_await server;
}

TEST(Session, RequestsInFlightAreCapped) { run_test(in_flight_is_capped()); }

// A handler that never answers; *unwound is set once it has been cancelled.
Session::RequestHandler sleep_forever(bool& unwound) {
  return [&unwound](const json&, const RequestContext&) -> Coro<json> {
    struct Flag {
      bool& b;
      ~Flag() { b = true; }
    } flag{unwound};
    co_await corio::sleep(1h);
    co_return nullptr;
  };
}

Coro<void> cancelled_request_gets_no_answer() {
  Harness h;
  Session session(h.transport);
  bool unwound = false;
  session.on_request("ping", empty_result());
  session.on_request("forever", sleep_forever(unwound));
  session.on_notification("notifications/cancelled", [&](const json& params) {
    session.cancel_request(params.at("requestId"));
  });
  corio::Task<void> server = corio::create_task(session.run());
  h.send(R"({"jsonrpc": "2.0", "id": "slow", "method": "forever"})");
  h.send(ping(1).dump());
  EXPECT_EQ((co_await h.next())["id"], 1);
  EXPECT_EQ(session.in_flight(), 1u);
  h.send(R"({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow"}})");
  h.send(ping(2).dump());
  EXPECT_EQ((co_await h.next())["id"], 2) << "no answer for the cancelled request";
  EXPECT_TRUE(unwound);
  EXPECT_EQ(session.in_flight(), 0u);
  h.to_server.close();
  co_await server;
}

TEST(Session, ACancelledRequestStopsAndGetsNoAnswer) { run_test(cancelled_request_gets_no_answer()); }

// The request tasks refer to their session: a cancelled run() ends only
// after they have, so the session can be destroyed right after it.
Coro<void> cancelled_run_ends_its_requests_first() {
  Harness h;
  Session session(h.transport);
  bool unwound = false;
  session.on_request("forever", sleep_forever(unwound));
  corio::Task<void> server = corio::create_task(session.run());
  h.send(R"({"jsonrpc": "2.0", "id": 1, "method": "forever"})");
  const auto started = [&session] { return session.in_flight() == 1; };
  CO_ASSERT(co_await eventually(started));
  server.cancel();
  bool cancelled = false;
  try {
    co_await server;
  } catch (const corio::CancelledError&) {
    cancelled = true;
  }
  EXPECT_TRUE(cancelled);
  EXPECT_TRUE(unwound) << "run() ended before its request did";
  EXPECT_EQ(session.in_flight(), 0u);
}

TEST(Session, ACancelledRunEndsItsRequestsFirst) { run_test(cancelled_run_ends_its_requests_first()); }

Coro<void> batches_when_accepted() {
  Harness h;
  Session session(h.transport);
  session.accept_batches(true);
  session.on_request("ping", empty_result());
  corio::Task<void> server = corio::create_task(session.run());
  h.send("[" + ping(1).dump() + R"(, {"jsonrpc": "2.0", "method": "notifications/x"}, 7, )" +
         ping(2).dump() + "]");
  const json replies = co_await h.next();
  EXPECT_TRUE(replies.is_array());
  EXPECT_EQ(replies.size(), 3u) << "two answers and one error; none for the notification";
  std::set<json> ids;
  for (const json& r : replies) ids.insert(r["id"]);
  EXPECT_EQ(ids, (std::set<json>{1, 2, nullptr})) << replies.dump();
  h.to_server.close();
  co_await server;
}

TEST(Session, AnAcceptedBatchIsAnsweredInOneArray) { run_test(batches_when_accepted()); }

// A batch's requests run max_in_flight at a time: before, all 1,000 at once.
Coro<json> count_running(int* running, int* most) {
  *most = std::max(*most, ++*running);
  co_await corio::sleep(0s);  // all of a chunk start before any ends
  --*running;
  co_return json::object();
}

Coro<void> batch_in_flight_is_capped() {
  Harness h(1 << 20);
  Session session(h.transport);
  session.accept_batches(true);
  session.max_in_flight(8);
  int running = 0, most = 0;
  session.on_request("ping", [&](const json&, const RequestContext&) { return count_running(&running, &most); });
  corio::Task<void> server = corio::create_task(session.run());
  json batch = json::array();
  for (int id = 1; id <= 1000; ++id) batch.push_back(ping(id));
  h.send(batch.dump());
  const json replies = co_await h.next();
  EXPECT_EQ(replies.size(), 1000u) << replies.dump().substr(0, 200);
  EXPECT_EQ(most, 8);
  h.to_server.close();
  co_await server;
}

TEST(Session, ABatchRunsAtMostMaxInFlightAtOnce) { run_test(batch_in_flight_is_capped()); }

// The client closes its side with a request still running: run() waits for
// it, its answer goes out, then run() returns. A message cut off by EOF is
// answered as the parse error it is.
Coro<void> eof_waits_for_running_requests() {
  Harness h;
  Session session(h.transport);
  corio::Event release;
  session.on_request("slow", [&](const json&, const RequestContext&) -> Coro<json> {
    co_await release.wait();
    co_return "done";
  });
  corio::Task<void> server = corio::create_task(session.run());
  h.send(R"({"jsonrpc": "2.0", "id": 1, "method": "slow"})");
  h.to_server.write(R"({"jsonrpc": "2.0", "id": 2, "meth)");
  h.to_server.close();
  const json cut = co_await h.next();
  EXPECT_EQ(cut["error"]["code"], code::parse_error);
  co_await corio::sleep(10ms);
  EXPECT_FALSE(server.done()) << "still waiting for the running request";
  release.set();
  EXPECT_EQ((co_await h.next())["result"], "done");
  co_await server;
}

TEST(Session, EofWaitsForTheRequestsStillRunning) { run_test(eof_waits_for_running_requests()); }

}  // namespace
}  // namespace corio_mcp_test
