// The io_uring backend's provided buffers (buffer_ring.hpp): which buffers
// the kernel fills, and what a burst past the published ones does.
// Skipped, with the probe's reason, where io_uring is unusable.
#include <set>
#include <vector>

#include "core/backend/io_uring/uring_impl.hpp"
#include "uring_test_support.hpp"

namespace {

using namespace uring_test;
using UringBuffers = UringFixture;

// Lends until `want` bytes came; the first lend's address (the buffer the
// message landed in) goes to `first`.
std::string lend_all(IoBackend& b, int fd, std::size_t want, const char** first) {
  std::string got;
  while (got.size() < want) {
    const char* data = nullptr;
    const long rc = b.try_recv_lent(fd, &data);
    if (rc == -EAGAIN) {
      b.arm(fd, false);
      if (!wait_for(b, fd, false)) break;
      continue;
    }
    if (rc <= 0) break;
    if (got.empty()) *first = data;
    got.append(data, static_cast<std::size_t>(rc));
    b.consume_lent(fd, static_cast<std::size_t>(rc));
  }
  return got;
}

// One message at a time, each read before the next is sent: the receives
// keep landing in the few buffers published (BufferRing::kMinPublished, 8),
// not each in the next of the ring's 64, which passed all 4 MiB through the
// cache.
TEST_F(UringBuffers, MessagesReadOneByOneReuseAFewWarmBuffers) {
  Pair p;
  b().attach(p.a);
  start_receiving(b(), p.a);
  std::set<const char*> buffers;
  for (std::size_t i = 0; i < 40; ++i) {
    const std::string msg = pattern(1000, i);
    ASSERT_EQ(::write(p.b, msg.data(), msg.size()), static_cast<ssize_t>(msg.size()));
    const char* first = nullptr;
    ASSERT_EQ(lend_all(b(), p.a, msg.size(), &first), msg);
    buffers.insert(first);
  }
  EXPECT_LE(buffers.size(), 9u) << "the receives cycled through cold buffers";
  b().detach(p.a);
}

// More streams receive in one poll than buffers were published: those the
// kernel answers ENOBUFS re-arm, and every stream gets its bytes, in order.
TEST_F(UringBuffers, ABurstPastThePublishedBuffersLosesNothing) {
  constexpr std::size_t kStreams = 24, kSize = 3000;
  std::vector<Pair> pairs(kStreams);
  for (Pair& p : pairs) {
    b().attach(p.a);
    start_receiving(b(), p.a);
  }
  pump(b());  // every multishot receive in the ring, before the burst
  for (std::size_t i = 0; i < kStreams; ++i) {
    const std::string msg = pattern(kSize, i);
    ASSERT_EQ(::write(pairs[i].b, msg.data(), msg.size()), static_cast<ssize_t>(kSize));
  }
  for (std::size_t i = 0; i < kStreams; ++i) {
    EXPECT_EQ(recv_all(b(), pairs[i].a, kSize), pattern(kSize, i)) << "stream " << i;
  }
  for (Pair& p : pairs) b().detach(p.a);
}

// Streams whose readers do not read hold every buffer of the ring; a stream
// whose reader waits meanwhile receives into a buffer of its own, and gives
// it back once its bytes are read: a burst that starved streams once leaves
// none of them holding 16 KiB for the rest of its life.
TEST_F(UringBuffers, AStarvedStreamGivesItsOwnBufferBackOnceRead) {
  auto& u = static_cast<corio::detail::uring::UringBackend&>(b());
  constexpr std::size_t kHolders = 16;
  std::vector<Pair> holders(kHolders);
  for (Pair& p : holders) {
    b().attach(p.a);
    start_receiving(b(), p.a);
  }
  // One write at a time, each received before the next: one buffer each,
  // 16 x 8 writes for a ring of 64 (a holder keeps up to kRecvCap).
  const std::string small(1000, 'h');
  for (std::size_t round = 0; round < corio::detail::uring::kRecvCap; ++round) {
    for (Pair& p : holders) {
      ASSERT_EQ(::write(p.b, small.data(), small.size()), static_cast<ssize_t>(small.size()));
      pump(b());
    }
  }
  Pair reader;
  b().attach(reader.a);
  start_receiving(b(), reader.a);
  pump(b());
  ASSERT_EQ(u.own_buffers(), 1u) << "the ring was not starved: the test proves nothing";
  const std::string msg = pattern(3000, 7);
  ASSERT_EQ(::write(reader.b, msg.data(), msg.size()), static_cast<ssize_t>(msg.size()));
  EXPECT_EQ(recv_all(b(), reader.a, msg.size()), msg);
  EXPECT_EQ(u.own_buffers(), 0u) << "read out, and still held";
  for (Pair& p : holders) b().detach(p.a);
  b().detach(reader.a);
}

}  // namespace
