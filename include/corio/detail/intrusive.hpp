// Intrusive building blocks of the core: reference counting, a circular doubly
// linked list whose nodes unlink themselves in O(1), and the ready-queue node.
// Nodes live inside the objects that wait (task states, awaiters in coroutine
// frames), so waiting allocates nothing.
#pragma once

#include <cstdint>
#include <utility>

namespace corio::detail {

// Intrusive pointer to any type with free functions add_ref(T*) and release(T*)
// found by ADL. Reference counts are plain integers: everything counted here is
// loop-affine (DESIGN.md: no atomics on the hot path).
template <class T>
class Ref {
 public:
  Ref() noexcept = default;
  explicit Ref(T* p) noexcept : p_(p) {}  // adopts one reference
  Ref(const Ref& o) noexcept : p_(o.p_) {
    if (p_) add_ref(p_);
  }
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Ref& operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Ref() {
    if (p_) release(p_);
  }
  static Ref share(T* p) noexcept {
    if (p) add_ref(p);
    return Ref(p);
  }
  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  friend bool operator==(const Ref& a, const Ref& b) noexcept { return a.p_ == b.p_; }

 private:
  T* p_ = nullptr;
};

struct ListHook {
  ListHook* prev = nullptr;
  ListHook* next = nullptr;
  ListHook() = default;
  ListHook(const ListHook&) = delete;
  ListHook& operator=(const ListHook&) = delete;
  bool linked() const noexcept { return prev != nullptr; }
  void unlink() noexcept {
    if (prev) {
      prev->next = next;
      next->prev = prev;
      prev = next = nullptr;
    }
  }
};

// Circular list with a sentinel; the head must not move once nodes are linked.
class ListHead : private ListHook {
 public:
  ListHead() noexcept { prev = next = this; }
  bool empty() const noexcept { return next == this; }
  void push_back(ListHook* n) noexcept {
    n->prev = prev;
    n->next = this;
    prev->next = n;
    prev = n;
  }
  ListHook* front() const noexcept { return empty() ? nullptr : next; }
  ListHook* pop_front() noexcept {
    ListHook* n = front();
    if (n) n->unlink();
    return n;
  }
  template <class F>
  void for_each(F&& f) const {
    for (ListHook* n = next; n != this; n = n->next) f(n);
  }
};

// What a ReadyNode's function is asked to do: run the work (and release the
// queue's reference), drop it unrun on loop close (release only), or, for a
// task state whose last reference went away, destroy the owner: a task's one
// per-type function pointer serves all three.
enum class ReadyOp : std::uint8_t { run, drop, destroy };

// A unit of work in the loop's ready queue. Each queued node holds one
// reference on its owner, released by fn.
struct ReadyNode {
  ReadyNode* next = nullptr;
  void (*fn)(ReadyNode*, ReadyOp) = nullptr;
};

// FIFO of ReadyNodes. take_all() detaches the whole batch in O(1): the loop runs
// exactly the batch that was queued when its run phase began (DESIGN.md).
class ReadyQueue {
 public:
  ReadyQueue() = default;
  ReadyQueue(const ReadyQueue&) = delete;
  ReadyQueue& operator=(const ReadyQueue&) = delete;
  bool empty() const noexcept { return head_ == nullptr; }
  // Walks the queue: for stats, never for the hot path.
  std::size_t size() const noexcept {
    std::size_t n = 0;
    for (const ReadyNode* p = head_; p; p = p->next) ++n;
    return n;
  }
  void push(ReadyNode* n) noexcept {
    n->next = nullptr;
    *tail_ = n;
    tail_ = &n->next;
  }
  ReadyNode* take_all() noexcept {
    ReadyNode* h = head_;
    head_ = nullptr;
    tail_ = &head_;
    return h;
  }

 private:
  ReadyNode* head_ = nullptr;
  ReadyNode** tail_ = &head_;
};

}  // namespace corio::detail
