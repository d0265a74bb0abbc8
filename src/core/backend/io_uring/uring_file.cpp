// The io_uring backend's file requests (backend.hpp's submit_file contract;
// AsyncFile's native path in src/net/file.cpp).
//
// A request is queued by submit_file() and prepared, like every other SQE,
// in poll()'s first phase, so that nothing is submitted between polls: the
// ring may still be disabled (it is enabled by the first poll, on the thread
// that runs the loop: SINGLE_ISSUER), and a step's requests go out in one
// enter with the rest. Its user_data is the FileOp's address tagged kFile;
// file requests are not a Conn's, so none of the Conn lifetime rules apply:
// the caller owns the op, and the backend only hands it back, once.
//
// Completion: the CQE's result goes to op.complete() during reap. What it
// does (complete a Future, whose callbacks the loop queues) is what makes
// the loop's run phase see the file's progress, so an iteration whose only
// news is a file completion does not block: the enter that reaped it was
// woken by its CQE.
//
// Destruction: a read still in the ring writes into its op's buffer until
// its CQE, and io_uring_queue_exit() does not wait for that. So the
// destructor cancels what the kernel has not started, then waits for every
// file CQE (bounded: regular-file requests always complete) and discards
// each op instead of completing it. If waiting is refused (the loop torn
// down on a thread other than the ring's issuer) or lasts past kDropWaitS,
// the ops left are leaked rather than freed under the kernel's feet.
#ifdef CORIO_HAVE_LIBURING

#include <cerrno>

#include "core/backend/io_uring/uring_impl.hpp"

namespace corio::detail::uring {

namespace {

FileOp* file_of(const io_uring_cqe& cqe) noexcept {
  return reinterpret_cast<FileOp*>(static_cast<std::uintptr_t>(cqe.user_data) & ~kOpMask);
}

}  // namespace

static_assert(alignof(FileOp) > kOpMask, "the tag needs a FileOp's low address bits");

// How long the destructor waits for the kernel: a regular file's request ends
// in far less, unless its storage is gone (an NFS server that went away): a
// leak is then better than a process that never exits.
constexpr int kDropWaitS = 10;

bool UringBackend::submit_file(FileOp& op) {
  op.next = nullptr;
  *files_tail_ = &op;
  files_tail_ = &op.next;
  return true;
}

void UringBackend::prepare_files() {
  while (FileOp* op = files_head_) {
    io_uring_sqe* s = sqe();  // may throw: op stays queued for the next poll
    // -1 as the 64-bit offset is io_uring's "at the file position".
    const auto at = static_cast<__u64>(op->offset);
    switch (op->kind) {
      case FileOp::Kind::read:
        io_uring_prep_read(s, op->fd, op->buf, op->len, at);
        break;
      case FileOp::Kind::write:
        io_uring_prep_write(s, op->fd, op->buf, op->len, at);
        break;
      case FileOp::Kind::fsync:
        io_uring_prep_fsync(s, op->fd, 0);
        break;
    }
    io_uring_sqe_set_data64(s, reinterpret_cast<std::uintptr_t>(op) | kFile);
    files_head_ = op->next;
    if (files_head_ == nullptr) files_tail_ = &files_head_;
    ++files_in_ring_;
  }
}

void UringBackend::on_file(const io_uring_cqe& cqe) noexcept {
  --files_in_ring_;
  FileOp* op = file_of(cqe);
  op->complete(*op, cqe.res);
}

void UringBackend::drop_files() noexcept {
  while (FileOp* op = files_head_) {  // never in the ring: nothing to wait for
    files_head_ = op->next;
    op->discard(*op);
  }
  files_tail_ = &files_head_;
  if (files_in_ring_ == 0) return;
  // Requests the kernel has not started end at once (-ECANCELED); one
  // already reading runs to its end.
  if (io_uring_sqe* s = io_uring_get_sqe(&ring_.r)) {
    io_uring_prep_cancel64(s, 0, IORING_ASYNC_CANCEL_ANY);
    io_uring_sqe_set_data64(s, kIgnore);
  }
  int seconds = 0;
  while (files_in_ring_ > 0) {
    __kernel_timespec second{1, 0};
    io_uring_cqe* first = nullptr;
    const int rc = io_uring_submit_and_wait_timeout(&ring_.r, &first, 1, &second, nullptr);
    if (rc == -ETIME && ++seconds > kDropWaitS) return;  // leaked: see the top
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EBUSY) return;
    unsigned head, seen = 0;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_.r, head, cqe) {
      ++seen;
      if ((cqe->user_data & kOpMask) != kFile) continue;  // the ring's exit ends the rest
      --files_in_ring_;
      FileOp* op = file_of(*cqe);
      op->discard(*op);
    }
    io_uring_cq_advance(&ring_.r, seen);
  }
}

}  // namespace corio::detail::uring

#endif  // CORIO_HAVE_LIBURING
