// The io_uring backend's receive and accept queues (src/core/backend/io_uring/
// fifo.hpp): first in, first out through every growth and wrap-around.
#include <gtest/gtest.h>

#include <deque>

#include "core/backend/io_uring/fifo.hpp"

namespace {

using corio::detail::uring::Fifo;

TEST(UringFifo, StartsEmpty) {
  Fifo<int> q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
}

// Pushes and pops in uneven runs, so that the ring grows while its head is
// in the middle (the copy must unwrap it), against std::deque as the model.
TEST(UringFifo, KeepsOrderThroughGrowthAndWrapAround) {
  Fifo<int> q;
  std::deque<int> model;
  int next = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < round % 7 + 2; ++i) {
      q.push_back(next);
      model.push_back(next++);
    }
    for (int i = 0; i < round % 5 + 1 && !model.empty(); ++i) {
      ASSERT_EQ(q.front(), model.front());
      q.pop_front();
      model.pop_front();
    }
    ASSERT_EQ(q.size(), model.size());
  }
  for (; !model.empty(); model.pop_front(), q.pop_front()) ASSERT_EQ(q.front(), model.front());
  EXPECT_TRUE(q.empty());
}

// The front can be changed in place (a chunk's read offset).
TEST(UringFifo, FrontIsTheStoredEntry) {
  struct Entry {
    int len, off;
  };
  Fifo<Entry> q;
  q.push_back({10, 0});
  q.push_back({20, 0});
  q.front().off = 4;
  EXPECT_EQ(q.front().off, 4);
  q.pop_front();
  EXPECT_EQ(q.front().len, 20);
}

}  // namespace
