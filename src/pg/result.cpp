// pg::Result and pg::Row over libpq's PGresult.
#include <corio/pg/result.hpp>

#include <cstdlib>
#include <stdexcept>

#include <libpq-fe.h>
#include <nlohmann/json.hpp>

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

namespace {

// Type OIDs (pg_type.dat): the columns whose values are JSON's own kinds.
enum Oid : unsigned { kBool = 16, kInt8 = 20, kInt2 = 21, kInt4 = 23, kJson = 114, kFloat4 = 700,
                      kFloat8 = 701, kNumeric = 1700, kJsonb = 3802 };

nlohmann::json value_of(const Row& row, const Result& r, int col) {
  if (row.is_null(col)) return nullptr;
  switch (r.column_type(col)) {
    case kBool: return row.get<bool>(col);
    case kInt2: case kInt4: case kInt8: return row.get<std::int64_t>(col);
    case kFloat4: case kFloat8: case kNumeric: return row.get<double>(col);
    case kJson: case kJsonb: return row.get<nlohmann::json>(col);
    default: return row.get<std::string>(col);
  }
}

}  // namespace

void to_json(nlohmann::json& j, const Row& row) {
  j = nlohmann::json::object();
  const Result& r = row.result();
  for (int col = 0; col < r.columns(); ++col) j[r.column_name(col)] = value_of(row, r, col);
}

void to_json(nlohmann::json& j, const Result& result) {
  j = nlohmann::json::array();
  for (const Row row : result) j.push_back(row);
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
