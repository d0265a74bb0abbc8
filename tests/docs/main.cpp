// corio_doc_snippets: every runnable code block of the docs in one program,
// so that they compile once. `corio_doc_snippets list` names them;
// `corio_doc_snippets run NAME` runs one and exits with its status
// (check_snippets.py runs each in a process of its own).
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "registry.hpp"

namespace corio_docs {
namespace {
std::map<std::string, Program>& programs() {
  static std::map<std::string, Program> all;  // built before main, by Registered
  return all;
}
}  // namespace

Registered::Registered(const char* name, Program program) { programs().emplace(name, program); }

}  // namespace corio_docs

int main(int argc, char** argv) {
  const auto& all = corio_docs::programs();
  if (argc == 2 && std::strcmp(argv[1], "list") == 0) {
    for (const auto& [name, program] : all) std::printf("%s\n", name.c_str());
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "run") == 0) {
    const auto it = all.find(argv[2]);
    if (it != all.end()) return it->second();
    std::fprintf(stderr, "corio_doc_snippets: no snippet %s\n", argv[2]);
    return 2;
  }
  std::fprintf(stderr, "usage: corio_doc_snippets list | run NAME\n");
  return 2;
}
