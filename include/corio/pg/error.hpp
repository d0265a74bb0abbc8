// corio::pg errors: what a query or a connection can fail with.
//
// ServerError is the server's ErrorResponse with its fields kept (asyncpg's
// PostgresError): SQLSTATE for code to branch on, the message, detail and
// hint for people, the 1-based character position in the query when the
// server gave one. ConnectionError means the connection is gone (refused,
// lost, closed); the Connection is then closed, never half-usable.
#pragma once

#include <stdexcept>
#include <string>

namespace corio::pg {

// The base of every error of this layer, so `catch (const pg::Error&)` is
// "anything the database said or did".
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ServerError : public Error {
 public:
  struct Fields {
    std::string severity, sqlstate, message, detail, hint;
    int position = 0;  // 0: none
  };
  explicit ServerError(Fields f);

  const std::string& sqlstate() const noexcept { return f_.sqlstate; }
  const std::string& message() const noexcept { return f_.message; }
  const std::string& detail() const noexcept { return f_.detail; }
  const std::string& hint() const noexcept { return f_.hint; }
  const std::string& severity() const noexcept { return f_.severity; }
  int position() const noexcept { return f_.position; }

 private:
  Fields f_;
};

class ConnectionError : public Error {
 public:
  using Error::Error;
};

// A value that does not convert to the C++ type asked for (text where an int
// was expected, NULL into a non-optional).
class DecodeError : public Error {
 public:
  using Error::Error;
};

}  // namespace corio::pg
