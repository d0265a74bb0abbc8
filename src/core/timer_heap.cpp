#include "timer_heap.hpp"

namespace corio::detail {

void TimerHeap::push(TimerNode* n, double when) {
  n->when = when;
  heap_.push_back(Entry{when, next_seq_++, n});
  sift_up(heap_.size() - 1, heap_.back());
}

TimerNode* TimerHeap::pop() noexcept {
  TimerNode* n = heap_.front().node;
  remove(n);
  return n;
}

void TimerHeap::remove(TimerNode* n) noexcept {
  const std::size_t i = n->heap_index;
  n->heap_index = TimerNode::kNotInHeap;
  const Entry last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;  // it was the last entry
  if (i > 0 && last < heap_[(i - 1) / 2]) {
    sift_up(i, last);
  } else {
    sift_down(i, last);
  }
}

// Moves the hole at i up until e fits, then places e there.
void TimerHeap::sift_up(std::size_t i, Entry e) noexcept {
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!(e < heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, e);
}

void TimerHeap::sift_down(std::size_t i, Entry e) noexcept {
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1] < heap_[child]) ++child;
    if (!(heap_[child] < e)) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, e);
}

}  // namespace corio::detail
