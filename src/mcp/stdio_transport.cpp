// StdioTransport (see transport.hpp): newline-delimited messages, parsed
// in place in the reader's buffer.
//
// A line over the limit is skipped as it streams in (its bytes are
// dropped as soon as they are known to belong to it), so an endless line
// costs at most max_message bytes of memory; the caller hears of it once,
// as too_large. Blank lines between messages are ignored, and a "\r"
// before the "\n" is tolerated (Windows clients).
#include <corio/mcp/transport.hpp>

#include <unistd.h>

#include <system_error>

#include <corio/pipe_streams.hpp>

namespace corio::mcp {

namespace {

bool blank(std::string_view line) noexcept {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

StdioTransport::StdioTransport(StreamReader in, StreamWriter out, std::size_t max_message)
    : in_(std::move(in)), out_(std::move(out)), max_message_(max_message) {}

StdioTransport StdioTransport::open(std::size_t max_message) {
  return StdioTransport(connect_read_pipe(STDIN_FILENO, max_message),
                        connect_write_pipe(STDOUT_FILENO), max_message);
}

Coro<std::optional<Received>> StdioTransport::receive() {
  try {
    co_await out_.drain();  // back-pressure: no new work while answers pile up
  } catch (const std::system_error&) {
    // The output is gone: the next send() reports it to the session.
  }
  for (;;) {
    std::size_t scanned = 0;  // of the buffer, known to hold no '\n'
    bool too_large = false;   // bytes of this line were dropped
    for (;;) {
      const std::string_view buf = in_.buffered();
      const std::size_t nl = buf.find('\n', scanned);
      if (nl != std::string_view::npos) {
        std::string_view line = buf.substr(0, nl);
        if (line.ends_with('\r')) line.remove_suffix(1);
        Received r{too_large || line.size() > max_message_ ? std::string() : std::string(line),
                   too_large || line.size() > max_message_};
        in_.consume(nl + 1);
        if (!r.too_large && blank(r.text)) break;  // next line
        co_return r;
      }
      if (buf.size() > max_message_) {
        too_large = true;
        in_.consume(buf.size());
        scanned = 0;
      } else {
        scanned = buf.size();
      }
      if (co_await in_.fill_buffer() == 0) {
        // EOF. A last message without its newline still counts (a client
        // that writes one request and closes); a truncated one then fails
        // to parse and is answered as such.
        const std::string_view rest = in_.buffered();
        if (too_large || rest.size() > max_message_) {
          // The tail of the refused message goes with it, else the next
          // receive() would take it for a message of its own.
          in_.consume(rest.size());
          co_return Received{std::string(), true};
        }
        if (blank(rest)) co_return std::nullopt;
        Received r{std::string(rest), false};
        in_.consume(rest.size());
        co_return r;
      }
    }
  }
}

Coro<void> StdioTransport::send(std::string_view message, const json& /*related_request*/) {
  // One write() per message: the writer queues it whole, so messages from
  // different tasks never interleave, and a short message costs one syscall.
  std::string framed;
  framed.reserve(message.size() + 1);
  framed.append(message);
  framed.push_back('\n');
  out_.write(framed);
  co_await out_.drain();
}

Coro<void> StdioTransport::flush() {
  try {
    while (out_.get_write_buffer_size() > 0) co_await out_.wait_writable();
  } catch (const std::system_error&) {
    // Nobody reads: there is nothing left to flush to.
  }
}

}  // namespace corio::mcp
