// corio::redis::Reply: one RESP reply as a value tree, and the errors of the
// redis layer.
//
//   redis::Reply r = co_await client.command("GET", "key");
//   if (r.is_nil()) ...; else use(r.str);
//
// Strings are binary-safe (std::string as bytes). An error reply to a
// command is thrown as ServerError; inside arrays (EXEC, pipeline()) errors
// stay Reply values of type `error`, so one failure does not hide the rest.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace corio::redis {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The server answered with an error reply ("WRONGTYPE ...", "ERR ...").
class ServerError : public Error {
 public:
  using Error::Error;
};
// Refused, lost or closed; commands in flight when it broke fail with it.
class ConnectionError : public Error {
 public:
  using Error::Error;
};

struct Reply {
  enum class Type { nil, string, status, integer, array, error };

  Type type = Type::nil;
  std::string str;          // string, status, error
  long long integer = 0;    // integer
  std::vector<Reply> elements;  // array

  bool is_nil() const noexcept { return type == Type::nil; }
  bool is_error() const noexcept { return type == Type::error; }
  // "OK" for a status, the bytes for a string; ServerError for an error,
  // Error for anything else.
  const std::string& as_string() const;
  long long as_integer() const;
};

}  // namespace corio::redis
