// The names the public headers' examples use without declaring them (a
// job, a helper, a sink): extract_snippets.py includes this file in the
// headers' translation unit, so an example reads as it would in a program.
// Nothing here runs; the definitions only make the examples link.
#pragma once

#include <string>
#include <string_view>

#include <corio/coro.hpp>

namespace corio_docs {

struct Job {
  int id = 0;
};

// Where a downloaded piece goes (`out.write(piece)`).
struct Sink {
  void write(std::string_view) {}
};

inline corio::Coro<> make_brief() { co_return; }
inline int count_lines() { return 0; }

}  // namespace corio_docs
