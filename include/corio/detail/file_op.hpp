// One file request handed to a completion backend (IoBackend::submit_file in
// src/core/backend/backend.hpp; AsyncFile's native path in src/net/file.cpp).
// Intrusive: the caller allocates it together with the buffer it describes
// and everything its completion needs, so the backend allocates nothing; the
// backend links it (`next`) while it waits to be prepared and tags its
// address in the request's user_data (hence the 8-byte alignment: the low
// bits carry the tag).
#pragma once

#include <cstdint>

namespace corio::detail {

struct alignas(8) FileOp {
  enum class Kind : std::uint8_t { read, write, fsync };

  Kind kind = Kind::read;
  int fd = -1;
  // read: where the bytes go; write: where they come from. Owned by the
  // caller, alive until complete() or discard() (the kernel uses it until then).
  void* buf = nullptr;
  std::uint32_t len = 0;  // a request's length is 32 bits in io_uring's SQE
  // >= 0: at this offset (pread/pwrite; the file position stays); -1: at the
  // file position, which advances (read/write, O_APPEND's end).
  std::int64_t offset = -1;
  // The result, bytes or -errno, on the loop's thread from inside poll(), exactly once.
  void (*complete)(FileOp& op, int result) noexcept = nullptr;
  // Instead of complete() when the backend is destroyed with the request in
  // flight, once the kernel is done with it: frees what the op owns and
  // touches no loop (the loop is going away).
  void (*discard)(FileOp& op) noexcept = nullptr;
  FileOp* next = nullptr;  // the backend's, from submit_file() until the request is prepared
};

}  // namespace corio::detail
