// The recycled file pieces (body_file.hpp): kept while answers take them,
// freed once the loop has gone idle, never kept outside a loop.
#include "http/wire/body_file.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/run.hpp>
#include <corio/sleep.hpp>
#include <corio/testing/virtual_clock.hpp>

namespace corio_http_test {
namespace {

using corio::Coro;
using corio::http::detail::kSpareLinger;
using corio::http::detail::kSparePieces;
using corio::http::detail::recycle_piece;
using corio::http::detail::spare_pieces;
using corio::http::detail::take_piece_buffer;

// n pieces taken at once and given back: n spares.
void take_and_give_back(std::size_t n) {
  std::vector<std::string> pieces;
  for (std::size_t i = 0; i < n; ++i) pieces.push_back(take_piece_buffer());
  for (std::string& p : pieces) recycle_piece(std::move(p));
}

std::chrono::duration<double> lingers(double times) {
  return std::chrono::duration<double>(kSpareLinger * times);
}

Coro<void> idle_loop_frees_spares() {
  take_and_give_back(kSparePieces + 1);
  EXPECT_EQ(spare_pieces(), kSparePieces) << "the one past the limit is freed";
  co_await corio::sleep(lingers(2.5));
  EXPECT_EQ(spare_pieces(), 0u);
}

// Answers that keep taking pieces keep the spares past several sweeps.
Coro<void> busy_loop_keeps_spares() {
  for (int i = 0; i < 8; ++i) {
    take_and_give_back(2);
    co_await corio::sleep(lingers(0.5));
  }
  EXPECT_EQ(spare_pieces(), 2u);
  co_await corio::sleep(lingers(2.5));
  EXPECT_EQ(spare_pieces(), 0u);
}

void run_virtual(Coro<void> body) {
  corio::run(std::move(body), {.clock = std::make_shared<corio::testing::VirtualClock>()});
}

TEST(FilePieces, IdleLoopHoldsNone) { run_virtual(idle_loop_frees_spares()); }

TEST(FilePieces, BusyLoopKeepsThem) { run_virtual(busy_loop_keeps_spares()); }

// A loop closed while its sweep waited: the next loop on the thread arms its own.
TEST(FilePieces, NextLoopSweepsToo) {
  corio::run([]() -> Coro<void> {
    take_and_give_back(1);
    co_return;
  }(), {.clock = std::make_shared<corio::testing::VirtualClock>()});
  run_virtual(idle_loop_frees_spares());
}

TEST(FilePieces, NoneKeptOutsideALoop) {
  take_and_give_back(2);
  EXPECT_EQ(spare_pieces(), 0u);
}

}  // namespace
}  // namespace corio_http_test
