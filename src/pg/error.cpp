#include <corio/pg/error.hpp>

#include <utility>

namespace corio::pg {

namespace {
std::string describe(const ServerError::Fields& f) {
  std::string s = (f.severity.empty() ? "ERROR" : f.severity) + ": " + f.message;
  if (!f.sqlstate.empty()) s += " (SQLSTATE " + f.sqlstate + ")";
  if (!f.detail.empty()) s += "; " + f.detail;
  return s;
}
}  // namespace

ServerError::ServerError(Fields f) : Error(describe(f)), f_(std::move(f)) {}

}  // namespace corio::pg
