// How TLS output is cut into records: a gathered write of many small
// pieces (an HTTP/2 pass: 9-byte frame headers between payloads) leaves in
// full records, not a record per piece. Counted on the receiving side with
// OpenSSL's message callback, which sees each record's inner content type.
#include "net/record_count.hpp"

namespace corio_net_test {
namespace {

// 64 KiB of payload in 16 frames of 4 KiB, each after a 9-byte header.
constexpr std::size_t kFrames = 16;
constexpr std::size_t kPayload = 4096;
constexpr std::string_view kHeader = "<header>\n";

std::string payload(std::size_t frame) { return std::string(kPayload, static_cast<char>('a' + frame)); }

std::string expected_bytes() {
  std::string all;
  for (std::size_t i = 0; i < kFrames; ++i) all += std::string(kHeader) + payload(i);
  return all;
}

Coro<void> write_frames(StreamReader reader, StreamWriter writer) {
  co_await reader.readline();
  std::vector<std::string> payloads;
  std::vector<std::string_view> pieces;
  for (std::size_t i = 0; i < kFrames; ++i) payloads.push_back(payload(i));
  for (const std::string& p : payloads) {
    pieces.push_back(kHeader);
    pieces.push_back(p);
  }
  writer.writelines(pieces);
  writer.close();
  co_await writer.wait_closed();
}

Coro<void> gathered_write_in_full_records() {
  Server server = co_await corio::start_server(write_frames, "127.0.0.1", 0, tls_server_options());
  RecordCount count;
  auto [reader, writer] =
      co_await corio::open_connection("localhost", server.port(), tls_options(counting_client(count)));
  writer.write("go\n");
  const std::string got = co_await reader.read();
  EXPECT_EQ(got, expected_bytes());
  const std::size_t full = (got.size() + SSL3_RT_MAX_PLAIN_LENGTH - 1) / SSL3_RT_MAX_PLAIN_LENGTH;
  EXPECT_EQ(count.application_data, full) << "records of " << got.size() << " bytes of plaintext";
  writer.close();
  co_await writer.wait_closed();
  server.close();
  co_await server.wait_closed();
}

TEST(TlsRecords, AGatheredWriteLeavesInFullRecords) { run_bounded(gathered_write_in_full_records()); }

}  // namespace
}  // namespace corio_net_test
