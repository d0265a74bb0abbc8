/// \file
/// Streams over pipes and the process's own standard input and output:
/// asyncio's loop.connect_read_pipe / connect_write_pipe, as a StreamReader
/// or StreamWriter (the same types a socket connection gives).
///
/// <!-- doc: body -->
///     auto in = corio::connect_read_pipe(STDIN_FILENO);
///     auto out = corio::connect_write_pipe(STDOUT_FILENO);
///     while (true) {
///       std::string line = co_await in.readline();   // the loop runs meanwhile
///       if (line.empty()) break;                     // EOF
///       out.write(line);
///       co_await out.drain();
///     }
///
/// The stream works on a duplicate of fd (the caller keeps fd, and closing
/// the stream closes only the duplicate), made non-blocking. Non-blocking
/// mode belongs to the open file description, which a duplicate shares with
/// fd, and a terminal or pipe may be shared with the parent shell too; so the
/// description's original flags are put back when the stream closes (asyncio
/// leaves them changed).
///
/// Pipes, terminals, sockets and character devices are waited on through
/// the loop. A regular file (stdin redirected from a file) cannot be polled,
/// and needs not be: its reads and writes never wait, so they go straight to
/// read(2) and write(2).
///
/// Writing to a pipe whose reader is gone is EPIPE (a std::system_error from
/// write() or drain()), never SIGPIPE.
///
/// Suspends: reads until bytes (or EOF) arrive; drain() while the pipe is
/// full. Resumed by: the loop, when the fd becomes readable or writable.
#pragma once

#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

namespace corio {

/// A StreamReader over a duplicate of fd (stdin, a pipe, a file).
StreamReader connect_read_pipe(int fd, std::size_t limit = kDefaultStreamLimit);
/// A StreamWriter over a duplicate of fd (stdout, a pipe, a file).
StreamWriter connect_write_pipe(int fd);

}  // namespace corio
