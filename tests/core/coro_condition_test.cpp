// A co_await in the condition of an if, while, for, do or switch (alone, negated,
// in && or ||, under ?:). g++ 12 miscompiles such a coroutine when its body
// declares no variable at all (coro.hpp, CORIO_CHECK_FRAME_LAYOUT): the
// coroutine could never run. So each shape is a template: Declared says
// whether its body declares a variable. Declared shapes must run under every
// compiler; the others run under clang and stop at once, with corio's
// message, under g++ 12 (before the check they hung in the loop's poll).
#include <vector>

#include <gtest/gtest.h>

#include "core/test_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio_test::virtual_time;

namespace {

// A declaration somewhere in the body is what spares a coroutine under g++ 12;
// in a discarded `if constexpr` branch it is not there at all.
#define DECLARE_IF(Declared)                 \
  if constexpr (Declared) {                  \
    [[maybe_unused]] const int declared = 0; \
  }

// Suspends first, so the condition's value comes back through a real resumption.
Coro<bool> step(bool v) {
  co_await corio::sleep(0s);
  co_return v;
}
// Finishes inline: the awaiter never suspends.
Coro<bool> ready(bool v) { co_return v; }

template <bool Declared>
Coro<int> negated_return(int* n) {
  DECLARE_IF(Declared)
  if (!co_await step(*n != 0)) co_return 7;
  co_return 1;
}
template <bool Declared>
Coro<int> negated_statement(int* n) {
  DECLARE_IF(Declared)
  if (!co_await ready(false)) ++*n;
  co_return *n;
}
template <bool Declared>
Coro<int> after_a_statement(int* n) {
  DECLARE_IF(Declared)
  *n += 5;
  if (!co_await step(false)) co_return *n;
  co_return -1;
}
template <bool Declared>
Coro<int> loop_return(int* n) {
  DECLARE_IF(Declared)
  for (;;) {
    if (!co_await step(++*n < 3)) co_return *n;
  }
}
template <bool Declared>
Coro<int> loop_break(int* n) {
  DECLARE_IF(Declared)
  while (*n < 10) {
    if (!co_await step(++*n < 4)) break;
  }
  co_return *n;
}
template <bool Declared>
Coro<int> loop_continue(int* n) {
  DECLARE_IF(Declared)
  while (*n < 10) {
    if (co_await step(++*n < 5)) continue;
    co_return *n;
  }
  co_return -1;
}
// The `while (co_await queue.get())` shape.
template <bool Declared>
Coro<int> while_condition(int* n) {
  DECLARE_IF(Declared)
  while (co_await step(++*n < 6)) {
  }
  co_return *n;
}
template <bool Declared>
Coro<int> for_condition(int* n) {
  DECLARE_IF(Declared)
  for (; co_await ready(++*n < 2);) {
  }
  co_return *n;
}
template <bool Declared>
Coro<int> do_condition(int* n) {
  DECLARE_IF(Declared)
  do {
    ++*n;
  } while (co_await step(*n < 3));
  co_return *n;
}
template <bool Declared>
Coro<int> either(int* n) {
  DECLARE_IF(Declared)
  if (co_await step(*n == 1) || co_await step(true)) co_return 2;
  co_return 0;
}
template <bool Declared>
Coro<int> both(int* n) {
  DECLARE_IF(Declared)
  if (co_await step(true) && co_await ready(*n == 0)) co_return 3;
  co_return 0;
}
template <bool Declared>
Coro<int> switch_on_choice(int* n) {
  DECLARE_IF(Declared)
  switch (co_await step(*n == 0) ? 1 : 2) {
    case 1:
      co_return 10;
    default:
      co_return 20;
  }
}

// Outside a condition, co_await in !, && and ?: is fine with no variable anywhere.
Coro<int> expressions_only(int* n) {
  co_return (co_await step(*n == 0) && !co_await ready(false)) ? 4 : -4;
}

struct Shape {
  const char* name;
  Coro<int> (*make)(int*);
  int result;  // with *n starting at 0
};

template <bool Declared>
std::vector<Shape> shapes() {
  return {
      {"negated_return", negated_return<Declared>, 7},
      {"negated_statement", negated_statement<Declared>, 1},
      {"after_a_statement", after_a_statement<Declared>, 5},
      {"loop_return", loop_return<Declared>, 3},
      {"loop_break", loop_break<Declared>, 4},
      {"loop_continue", loop_continue<Declared>, 5},
      {"while_condition", while_condition<Declared>, 6},
      {"for_condition", for_condition<Declared>, 2},
      {"do_condition", do_condition<Declared>, 3},
      {"either", either<Declared>, 2},
      {"both", both<Declared>, 3},
      {"switch_on_choice", switch_on_choice<Declared>, 10},
  };
}

int run_shape(const Shape& s) {
  int n = 0;
  return corio::run(s.make(&n), virtual_time());
}

void expect_all_run(const std::vector<Shape>& list) {
  for (const Shape& s : list) EXPECT_EQ(run_shape(s), s.result) << s.name;
}

}  // namespace

TEST(CoroCondition, ShapesInACoroutineThatDeclaresAVariable) { expect_all_run(shapes<true>()); }

TEST(CoroCondition, AwaitsInExpressionsNeedNoVariable) {
  expect_all_run({{"expressions_only", expressions_only, 4}});
}

#ifdef CORIO_CHECK_FRAME_LAYOUT
// g++ 12: the coroutine stops where it is made, with the message, not in a hang.
TEST(CoroCondition, ShapesWithNoVariableStopWithAMessageUnderGcc12) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const Shape& s : shapes<false>()) {
    EXPECT_DEATH(run_shape(s), "g\\+\\+ 12 laid out this coroutine's frame wrongly") << s.name;
  }
}
#else
TEST(CoroCondition, ShapesWithNoVariableRunUnderOtherCompilers) { expect_all_run(shapes<false>()); }
#endif
