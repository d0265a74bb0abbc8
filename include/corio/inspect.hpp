/// \file
/// Looking into a running corio process from outside: `corio ps PID`,
/// `corio pstree PID`, `corio stats PID`.
///
/// A process whose loop is created with RunOptions::inspect, or with
/// CORIO_INSPECT=1 in its environment, listens on a Unix stream socket at
/// inspect_socket_path(getpid()); a process without either opens nothing.
/// The loop serves it itself, with callbacks between its steps (no task, so
/// the server never shows in its own `ps`). One loop per process serves: the
/// first created with inspection on; the socket is removed when that loop
/// closes (or when the process calls exit() first).
///
/// Who may connect: only the process's own user. The socket is mode 0600 in
/// a directory of mode 0700 that the user owns, and each connection's peer
/// is checked again with SO_PEERCRED: another uid is answered "error:
/// permission denied" and closed. Root is let in: it can read the process's
/// memory with ptrace anyway, so refusing it would protect nothing.
///
/// The protocol, one request per connection: the client sends one line,
/// `ps`, `pstree` or `stats`, optionally followed by ` json`; the server
/// answers and closes. Text answers are task_tree.hpp's table and tree, and
/// the loop's counters; JSON answers are one object per line (a task's
/// record for ps and pstree alike, the tree being its awaited_by ids; one
/// object of counters for stats). A request that cannot be served gets one
/// line starting with "error: ". The server is bounded: a request line of
/// at most 256 bytes, 16 connections at once, 5 seconds for each exchange,
/// non-blocking writes, and an answer cut (with an error line) past 16 MiB,
/// so a slow or silent client can stall neither the loop nor its memory.
#pragma once

#include <string>

namespace corio {

/// Where this user's inspection sockets are: $XDG_RUNTIME_DIR/corio when
/// XDG_RUNTIME_DIR is set, else corio-UID in the temporary directory
/// ($TMPDIR, else /tmp).
std::string inspect_directory();

/// inspect_directory() + "/<pid>.sock".
std::string inspect_socket_path(int pid);

}  // namespace corio
