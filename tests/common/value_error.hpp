// raises_value_error: whether an awaitable a factory starts throws
// corio::ValueError saying something, for the tests of arguments refused
// before any I/O (a NUL byte in a C string, say).
#pragma once

#include <exception>
#include <string>

#include <gtest/gtest.h>

#include <corio/coro.hpp>
#include <corio/errors.hpp>

namespace corio_testing {

// Any other exception fails the test. Made and awaited apart: g++ 12
// destroys temporaries inside a co_await expression twice.
template <class F>
corio::Coro<bool> raises_value_error(F make, std::string says) {
  try {
    auto started = make();
    co_await std::move(started);
  } catch (const corio::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    co_return true;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a ValueError: " << e.what();
  }
  co_return false;
}

}  // namespace corio_testing
