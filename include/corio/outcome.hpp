/// \file
/// corio::Outcome<T>: one result of gather(return_exceptions, ...): a value or
/// the exception (CancelledError for a cancelled child) that replaced it.
#pragma once

#include <exception>
#include <utility>
#include <variant>

namespace corio {

/// A value or the exception that replaced it: one result of gather(return_exceptions, ...).
template <class T>
class Outcome {
 public:
  /// An outcome holding v.
  static Outcome success(T v) { return Outcome(std::in_place_index<0>, std::move(v)); }
  /// An outcome holding the exception e.
  static Outcome failure(std::exception_ptr e) {
    return Outcome(std::in_place_index<1>, std::move(e));
  }

  /// Whether it holds a value.
  bool has_value() const noexcept { return v_.index() == 0; }
  /// has_value().
  explicit operator bool() const noexcept { return has_value(); }
  /// The value; rethrows the error if there is none.
  T& value() & {
    check();
    return std::get<0>(v_);
  }
  /// The value; rethrows the error if there is none.
  const T& value() const& {
    check();
    return std::get<0>(v_);
  }
  /// The value, moved out; rethrows the error if there is none.
  T&& value() && {
    check();
    return std::get<0>(std::move(v_));
  }
  /// The exception, or nullptr when there is a value.
  std::exception_ptr error() const noexcept { return has_value() ? nullptr : std::get<1>(v_); }

 private:
  template <std::size_t I, class U>
  Outcome(std::in_place_index_t<I> i, U&& u) : v_(i, std::forward<U>(u)) {}
  void check() const {
    if (!has_value()) std::rethrow_exception(std::get<1>(v_));
  }
  std::variant<T, std::exception_ptr> v_;
};

}  // namespace corio
