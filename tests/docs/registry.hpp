// The docs' runnable snippets register here (tests/docs/extract_snippets.py
// generates the registrations); main.cpp runs one by name.
#pragma once

namespace corio_docs {

using Program = int (*)();

// A static object per runnable snippet: registers it at start-up.
struct Registered {
  Registered(const char* name, Program program);
};

}  // namespace corio_docs
