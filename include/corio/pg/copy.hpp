// corio::pg COPY streaming: CopyIn writes rows to the server, CopyOut reads
// them, in COPY's text (or csv/binary) format as the statement says.
//
//   pg::CopyIn in = co_await conn.copy_in("COPY items (id, name) FROM STDIN");
//   co_await in.write("1\tapple\n2\tpear\n");
//   long stored = co_await in.finish();
//
//   pg::CopyOut out = co_await conn.copy_out("COPY items TO STDOUT (FORMAT csv)");
//   while (auto chunk = co_await out.read()) consume(*chunk);   // one row a chunk
//
// Writes wait only while the socket is full, so memory stays bounded both
// ways. Like a RowStream, a copy holds the connection until it ends; one
// destroyed before its end is aborted (CopyIn: nothing is stored; CopyOut:
// the query is cancelled) and the connection is usable again.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <corio/coro.hpp>

namespace corio::pg {

namespace detail {
struct ConnState;
}

class CopyIn {
 public:
  explicit CopyIn(std::shared_ptr<detail::ConnState> s) noexcept : s_(std::move(s)) {}
  CopyIn(CopyIn&& o) noexcept;
  CopyIn& operator=(CopyIn&&) = delete;
  ~CopyIn();

  Coro<void> write(std::string data);
  // Ends the copy; the rows stored. Throws the server's error (bad data).
  Coro<long> finish();

 private:
  std::shared_ptr<detail::ConnState> s_;
};

class CopyOut {
 public:
  explicit CopyOut(std::shared_ptr<detail::ConnState> s) noexcept : s_(std::move(s)) {}
  CopyOut(CopyOut&& o) noexcept;
  CopyOut& operator=(CopyOut&&) = delete;
  ~CopyOut();

  // The next chunk (a row in text and csv format), std::nullopt at the end.
  Coro<std::optional<std::string>> read();

 private:
  std::shared_ptr<detail::ConnState> s_;
};

}  // namespace corio::pg
