// corio::pg::Result: the rows of one query, typed on access.
//
//   pg::Result r = co_await conn.query("SELECT id, name FROM t WHERE id > $1", 10);
//   for (pg::Row row : r) {
//     int id = row.get<int>(0);
//     std::optional<std::string> name = row.get<std::optional<std::string>>("name");
//   }
//   nlohmann::json rows = r;   // [{"id": 11, "name": "..."}, ...] (to_json below)
//
// A Result owns libpq's result (shared: copies are cheap and Rows keep it
// alive). Values are converted by pg::Decode<T> (value.hpp) when read; a NULL
// read as anything but std::optional is a DecodeError, as is text that does
// not parse as the type asked for.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <corio/pg/value.hpp>

struct pg_result;  // libpq's PGresult, kept out of this header

namespace corio::pg {

class Row;

class Result {
 public:
  Result() = default;
  explicit Result(pg_result* res);  // takes ownership

  int rows() const noexcept;
  int columns() const noexcept;
  bool empty() const noexcept { return rows() == 0; }
  // Rows affected by INSERT/UPDATE/DELETE/... (PQcmdTuples); 0 if none.
  long affected() const;
  // The command tag, e.g. "INSERT 0 1".
  std::string status() const;
  std::string column_name(int col) const;
  // -1 when there is no such column.
  int column_index(std::string_view name) const;
  // The column's type OID (e.g. 23 for int4).
  unsigned column_type(int col) const;

  // The text of one value, std::nullopt for NULL.
  std::optional<std::string_view> text(int row, int col) const;

  Row operator[](int row) const;
  Row at(int row) const;  // throws std::out_of_range

  class Iterator;
  Iterator begin() const;
  Iterator end() const;

  pg_result* native() const noexcept { return res_.get(); }

 private:
  std::shared_ptr<pg_result> res_;
};

class Row {
 public:
  Row(const Result* result, int row) noexcept : result_(result), row_(row) {}

  int index() const noexcept { return row_; }
  const Result& result() const noexcept { return *result_; }  // the Result it is a row of
  int size() const noexcept { return result_->columns(); }
  bool is_null(int col) const { return !result_->text(row_, col); }

  template <class T>
  T get(int col) const {
    return decode<T>(result_->text(row_, checked(col)), col);
  }
  template <class T>
  T get(std::string_view column) const {
    return get<T>(column_of(column));
  }

 private:
  template <class T>
  struct IsOptional : std::false_type {};
  template <class U>
  struct IsOptional<std::optional<U>> : std::true_type {};

  template <class T>
  T decode(std::optional<std::string_view> text, int col) const {
    if constexpr (IsOptional<T>::value) {
      if (!text) return std::nullopt;
      return decode<typename T::value_type>(text, col);
    } else {
      if (!text) throw_null(col);
      try {
        return Decode<T>::from_text(*text);
      } catch (const DecodeError& e) {
        rethrow_with_column(e, col);
      }
    }
  }
  int checked(int col) const;
  int column_of(std::string_view name) const;
  [[noreturn]] void throw_null(int col) const;
  [[noreturn]] void rethrow_with_column(const DecodeError& e, int col) const;

  const Result* result_;
  int row_;
};

class Result::Iterator {
 public:
  using value_type = Row;
  using difference_type = std::ptrdiff_t;
  Iterator() = default;
  Iterator(const Result* r, int row) noexcept : r_(r), row_(row) {}
  Row operator*() const noexcept { return Row(r_, row_); }
  Iterator& operator++() noexcept {
    ++row_;
    return *this;
  }
  Iterator operator++(int) noexcept {
    Iterator old = *this;
    ++row_;
    return old;
  }
  bool operator==(const Iterator& o) const noexcept { return row_ == o.row_; }

 private:
  const Result* r_ = nullptr;
  int row_ = 0;
};

// A row as a JSON object by column name, a result as an array of them
// (asyncpg's dict(row)), for nlohmann::json's conversions: `json j = row;`,
// Response::json(result). bool, integer, float and numeric columns become
// JSON booleans and numbers, json and jsonb columns their value, NULL null,
// every other type its text (dates and timestamps in PostgreSQL's ISO form).
void to_json(nlohmann::json& j, const Row& row);
void to_json(nlohmann::json& j, const Result& result);

inline Row Result::operator[](int row) const { return Row(this, row); }
inline Result::Iterator Result::begin() const { return Iterator(this, 0); }
inline Result::Iterator Result::end() const { return Iterator(this, rows()); }

}  // namespace corio::pg
