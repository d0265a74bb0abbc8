// Binary min-heap of timers keyed by (deadline, sequence).
//
// Entries are stored by value so that sifting compares without touching the
// nodes; each move writes the node's index back, which makes removal of a
// cancelled timer O(log n) and immediate. Eager removal is what lets a
// sleeping task keep its TimerNode inside its own coroutine frame: nothing in
// the heap can outlive the frame. The sequence number keeps timers with equal
// deadlines in scheduling order (asyncio's heap of (when, seq) pairs).
#pragma once

#include <cstdint>
#include <vector>

#include <corio/handle.hpp>

namespace corio::detail {

class TimerHeap {
 public:
  bool empty() const noexcept { return heap_.empty(); }
  // Exact: cancelled timers leave the heap at once.
  std::size_t size() const noexcept { return heap_.size(); }
  double top_when() const noexcept { return heap_.front().when; }

  void push(TimerNode* n, double when);
  TimerNode* pop() noexcept;
  void remove(TimerNode* n) noexcept;

 private:
  struct Entry {
    double when;
    std::uint64_t seq;
    TimerNode* node;
    bool operator<(const Entry& o) const noexcept {
      return when < o.when || (when == o.when && seq < o.seq);
    }
  };
  void place(std::size_t i, const Entry& e) noexcept {
    heap_[i] = e;
    e.node->heap_index = i;
  }
  void sift_up(std::size_t i, Entry e) noexcept;
  void sift_down(std::size_t i, Entry e) noexcept;

  std::vector<Entry> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace corio::detail
