// Server::add_static: a URL path joined under a root without escaping it.
// ".." segments are refused outright; the joined path is then resolved
// (symlinks included) and must still lie under the resolved root, so a
// symlink pointing out is a 403 too.
//
// Precompressed siblings, as nginx's gzip_static: a client that accepts
// gzip gets <file>.gz when it exists (under the root, a regular file),
// with Content-Encoding: gzip. Its validators and ranges are the .gz
// file's own bytes, as nginx's are: a resumed download of the compressed
// answer stays consistent. Vary: Accept-Encoding on both answers whenever
// a sibling exists, so a shared cache keeps them apart.
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
#include "http/wire/syntax.hpp"

namespace corio::http {

namespace detail {

namespace {

std::string resolved(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  return real ? std::string(real.get()) : std::string();
}

// realpath(3) of root + rel, where root is resolved already and rel has no
// "." or ".." segment: when no component below the root is a symbolic link
// (lstat tells), the path is its own real path. One lstat per component
// below the root, where realpath made a readlink per component of the whole
// path: 8 syscalls per file answered under /tmp/x/root, the .gz sibling's
// look included (strace). A link anywhere takes realpath's way. "" when the
// path does not exist; *st: the file's (stat, through links).
std::string resolved_below(const std::string& root, const std::string& path, struct stat* st) {
  for (std::size_t end = path.find('/', root.size() + 1);; end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (::lstat(prefix.c_str(), st) != 0) return std::string();
    if (S_ISLNK(st->st_mode)) {
      std::string real = resolved(path);
      return !real.empty() && ::stat(real.c_str(), st) == 0 ? real : std::string();
    }
    if (end == std::string::npos) return path;
  }
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool under_root(const std::string& root, const std::string& real) {
  return real == root || real.compare(0, root.size() + 1, root + "/") == 0;
}

// A qvalue of zero ("0", "0.", "0.000"): "not acceptable" (RFC 9110
// section 12.4.2); anything else that parses counts as acceptable.
bool zero_q(std::string_view params) {
  const std::size_t q = params.find("q=");
  if (q == std::string_view::npos) return false;
  const std::string_view value = syntax::trim_ows(params.substr(q + 2));
  return !value.empty() && value[0] == '0' &&
         value.find_first_not_of("0.", 0) == std::string_view::npos;
}

// Whether Accept-Encoding allows gzip: named (or x-gzip) with a non-zero
// q, or covered by "*" when not named.
bool accepts_gzip(const Headers& headers) {
  std::optional<bool> named, star;
  for (std::string_view value : headers.get_all("Accept-Encoding")) {
    syntax::for_each_element(value, [&](std::string_view element) {
      const std::size_t semi = element.find(';');
      const std::string_view coding = syntax::trim_ows(element.substr(0, semi));
      const bool ok = semi == std::string_view::npos || !zero_q(element.substr(semi + 1));
      if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) named = ok;
      if (coding == "*") star = ok;
    });
  }
  return named.value_or(star.value_or(false));
}

// The precompressed sibling of the file at real, or "" if there is none.
// Its directory is real's, resolved already: only the name can be a link.
std::string gzip_sibling(const std::string& root, const std::string& real) {
  std::string gz = real + ".gz";
  struct stat st {};
  if (::lstat(gz.c_str(), &st) != 0) return std::string();
  if (!S_ISLNK(st.st_mode)) return S_ISREG(st.st_mode) ? gz : std::string();
  gz = resolved(gz);
  return !gz.empty() && under_root(root, gz) && is_regular_file(gz) ? gz : std::string();
}

// The answer for the file at real: it, or its .gz sibling.
Response file_or_gzip(const std::string& root, std::string real, const Headers& request) {
  const std::string gz = gzip_sibling(root, real);
  if (gz.empty()) return Response::file(std::move(real));
  const bool use_gz = accepts_gzip(request);
  Response r = Response::file(use_gz ? gz : real);
  r.headers.add("Content-Type", std::string(content_type_for(real)));
  if (use_gz) r.headers.add("Content-Encoding", "gzip");
  r.headers.add("Vary", "Accept-Encoding");
  return r;
}

// The file under root that rel (a decoded URL path) names.
Response static_file(const std::string& root, std::string_view rel, const Headers& request) {
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
  struct stat st {};
  std::string real = joined == root ? root : resolved_below(root, joined, &st);
  if (real.empty()) throw HTTPException(404, "Not Found");
  if (!under_root(root, real)) throw HTTPException(403, "Forbidden");
  if (real == root || S_ISDIR(st.st_mode)) real += "/index.html";
  return file_or_gzip(root, std::move(real), request);
}

Coro<Response> serve_static(std::string root, Request& req) {
  co_return static_file(root, req.param("path"), req.headers());
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
