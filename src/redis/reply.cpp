#include <corio/redis/reply.hpp>

namespace corio::redis {

const std::string& Reply::as_string() const {
  if (type == Type::string || type == Type::status) return str;
  if (type == Type::error) throw ServerError(str);
  throw Error(type == Type::nil ? "reply is nil, not a string" : "reply is not a string");
}

long long Reply::as_integer() const {
  if (type == Type::integer) return integer;
  if (type == Type::error) throw ServerError(str);
  throw Error("reply is not an integer");
}

}  // namespace corio::redis
