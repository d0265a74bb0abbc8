// Server::add_static: a URL path joined under a root without escaping it.
// ".." segments are refused outright; the joined path is then resolved
// (symlinks included) and must still lie under the resolved root, so a
// symlink pointing out is a 403 too.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>

#include <corio/errors.hpp>
#include <corio/http/server.hpp>

#include "http/wire/body_file.hpp"

namespace corio::http {

namespace detail {

namespace {

std::string resolved(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  return real ? std::string(real.get()) : std::string();
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The file under root that rel (a decoded URL path) names.
Response static_file(const std::string& root, std::string_view rel) {
  if (rel.find('\0') != std::string_view::npos) throw HTTPException(400, "NUL in path");
  std::string joined = root;
  std::string_view rest = rel;
  while (!rest.empty()) {
    const std::size_t slash = rest.find('/');
    const std::string_view seg = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (seg == "..") throw HTTPException(403, "Forbidden");
    if (seg.empty() || seg == ".") continue;
    joined += '/';
    joined += seg;
  }
  std::string real = resolved(joined);
  if (real.empty()) throw HTTPException(404, "Not Found");
  if (real != root && real.compare(0, root.size() + 1, root + "/") != 0) {
    throw HTTPException(403, "Forbidden");
  }
  if (is_directory(real)) real += "/index.html";
  return Response::file(std::move(real));
}

Coro<Response> serve_static(std::string root, Request& req) {
  co_return static_file(root, req.param("path"));
}

}  // namespace

}  // namespace detail

void Server::add_static(std::string_view prefix, std::string root) {
  const std::string real_root = detail::resolved(root);
  if (real_root.empty() || !detail::is_directory(real_root)) {
    throw ValueError("add_static: not a directory: " + root);
  }
  std::string pattern(prefix);
  if (pattern.empty() || pattern.back() != '/') pattern += '/';
  pattern += "{path:.*}";
  get(pattern, [real_root](Request& req) { return detail::serve_static(real_root, req); });
}

}  // namespace corio::http
