// pg::Result and pg::Row over libpq's PGresult.
#include <corio/pg/result.hpp>

#include <cstdlib>
#include <stdexcept>

#include <libpq-fe.h>

namespace corio::pg {

Result::Result(pg_result* res) : res_(res, &PQclear) {}

int Result::rows() const noexcept { return res_ ? PQntuples(res_.get()) : 0; }
int Result::columns() const noexcept { return res_ ? PQnfields(res_.get()) : 0; }

long Result::affected() const {
  if (!res_) return 0;
  const char* n = PQcmdTuples(res_.get());
  return *n ? std::strtol(n, nullptr, 10) : 0;
}

std::string Result::status() const { return res_ ? PQcmdStatus(res_.get()) : ""; }

std::string Result::column_name(int col) const {
  const char* n = res_ ? PQfname(res_.get(), col) : nullptr;
  if (!n) throw std::out_of_range("no column " + std::to_string(col));
  return n;
}

int Result::column_index(std::string_view name) const {
  if (!res_) return -1;
  // PQfnumber folds unquoted names to lower case; callers name columns as
  // the result spells them, so compare exactly.
  for (int c = 0; c < columns(); ++c) {
    if (name == PQfname(res_.get(), c)) return c;
  }
  return -1;
}

unsigned Result::column_type(int col) const { return res_ ? PQftype(res_.get(), col) : 0; }

std::optional<std::string_view> Result::text(int row, int col) const {
  if (PQgetisnull(res_.get(), row, col)) return std::nullopt;
  return std::string_view(PQgetvalue(res_.get(), row, col),
                          static_cast<std::size_t>(PQgetlength(res_.get(), row, col)));
}

Row Result::at(int row) const {
  if (row < 0 || row >= rows()) throw std::out_of_range("no row " + std::to_string(row));
  return Row(this, row);
}

int Row::checked(int col) const {
  if (col < 0 || col >= result_->columns()) {
    throw std::out_of_range("no column " + std::to_string(col));
  }
  return col;
}

int Row::column_of(std::string_view name) const {
  const int col = result_->column_index(name);
  if (col < 0) throw std::out_of_range("no column named " + std::string(name));
  return col;
}

void Row::throw_null(int col) const {
  throw DecodeError("column " + result_->column_name(col) +
                    " is NULL; read it as std::optional");
}

void Row::rethrow_with_column(const DecodeError& e, int col) const {
  throw DecodeError("column " + result_->column_name(col) + ": " + e.what());
}

}  // namespace corio::pg
