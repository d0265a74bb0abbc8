// corio::pg::RowStream: a query's rows one at a time, for results too large
// to hold (asyncpg's cursor iteration; libpq's single-row mode).
//
//   pg::RowStream rows = co_await conn.stream("SELECT * FROM big WHERE k > $1", 10);
//   while (co_await rows.next()) use(rows.row());
//
// Memory stays bounded: the socket is read only as fast as next() is
// called, so a slow consumer slows the server down (TCP flow control)
// instead of filling memory. The connection runs nothing else meanwhile
// (other queries wait their turn). A stream destroyed before its end, or a
// next() cancelled, cancels the query on the server and drains the rest;
// the connection is usable again afterwards.
#pragma once

#include <memory>

#include <corio/coro.hpp>
#include <corio/pg/result.hpp>

namespace corio::pg {

namespace detail {
struct ConnState;
}

class RowStream {
 public:
  explicit RowStream(std::shared_ptr<detail::ConnState> s) noexcept : s_(std::move(s)) {}
  RowStream(RowStream&& o) noexcept;
  RowStream& operator=(RowStream&&) = delete;
  ~RowStream();

  // Moves to the next row: false at the end. Throws the query's ServerError.
  Coro<bool> next();
  // The current row (after next() returned true); valid until the next call.
  Row row() const noexcept { return current_[0]; }
  const Result& result() const noexcept { return current_; }

 private:
  std::shared_ptr<detail::ConnState> s_;  // null once over
  Result current_;
};

}  // namespace corio::pg
