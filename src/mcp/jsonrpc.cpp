// JSON-RPC 2.0 message validation (see jsonrpc.hpp).
#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp {

namespace {

// MCP: "the ID MUST be a string or integer" and "MUST NOT be null".
bool valid_id(const json& id) noexcept { return id.is_string() || id.is_number_integer(); }

// The id to carry in an error answer to a message we could not accept:
// its own, if it is usable, else null.
json usable_id(const json& j) {
  const auto it = j.find("id");
  return it != j.end() && valid_id(*it) ? *it : json(nullptr);
}

Message parse_call(const json& j) {
  Message m;
  const json& method = j.at("method");
  if (!method.is_string()) throw InvalidMessage(usable_id(j), "\"method\" must be a string");
  m.method = method.get<std::string>();
  if (const auto p = j.find("params"); p != j.end()) {
    if (!p->is_object() && !p->is_array()) {
      throw InvalidMessage(usable_id(j), "\"params\" must be an object or an array");
    }
    m.params = *p;
  }
  const auto id = j.find("id");
  if (id == j.end()) {
    m.kind = Message::Kind::notification;
    return m;
  }
  if (!valid_id(*id)) throw InvalidMessage(nullptr, "\"id\" must be a string or an integer");
  // A method in the notifications/ namespace never expects an answer: one
  // sent with an id is a confused client, told so rather than half-served.
  if (m.method.starts_with("notifications/")) {
    throw InvalidMessage(*id, "a notification must not have an \"id\"");
  }
  m.kind = Message::Kind::request;
  m.id = *id;
  return m;
}

Message parse_answer(const json& j) {
  const auto result = j.find("result");
  const auto error = j.find("error");
  if ((result != j.end()) == (error != j.end())) {
    throw InvalidMessage(usable_id(j), "a response has exactly one of \"result\" and \"error\"");
  }
  Message m;
  const auto id = j.find("id");
  if (id == j.end()) throw InvalidMessage(nullptr, "a response needs an \"id\"");
  if (result != j.end()) {
    if (!valid_id(*id)) throw InvalidMessage(nullptr, "\"id\" must be a string or an integer");
    m.kind = Message::Kind::response;
    m.result = *result;
  } else {
    // An error answer to a message whose id could not be read has id null.
    if (!id->is_null() && !valid_id(*id)) {
      throw InvalidMessage(nullptr, "\"id\" must be a string, an integer or null");
    }
    if (!error->is_object() || !error->value("code", json()).is_number_integer() ||
        !error->value("message", json()).is_string()) {
      throw InvalidMessage(usable_id(j), "\"error\" needs an integer code and a string message");
    }
    m.kind = Message::Kind::error;
    m.error = *error;
  }
  m.id = *id;
  return m;
}

}  // namespace

json parse_json(std::string_view text, const http::JsonLimits& limits) {
  try {
    return http::parse_json(text, limits);
  } catch (const http::JsonError& e) {
    // corio's words, not the JSON library's (http/json.hpp).
    throw RpcError(error_code::parse_error, std::string("Parse error: ") + e.what());
  }
}

Message parse_message(const json& j) {
  if (!j.is_object()) throw InvalidMessage(nullptr, "a message must be a JSON object");
  const auto version = j.find("jsonrpc");
  if (version == j.end() || *version != "2.0") {
    throw InvalidMessage(usable_id(j), "\"jsonrpc\" must be \"2.0\"");
  }
  return j.contains("method") ? parse_call(j) : parse_answer(j);
}

json make_request(const json& id, std::string_view method, json params) {
  json j = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) j["params"] = std::move(params);
  return j;
}

json make_notification(std::string_view method, json params) {
  json j = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) j["params"] = std::move(params);
  return j;
}

json make_response(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json make_error(const json& id, int code, std::string_view message, const json& data) {
  json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = data;
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

json make_error(const json& id, const RpcError& e) {
  return make_error(id, e.code(), e.what(), e.data());
}

}  // namespace corio::mcp
