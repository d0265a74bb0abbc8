// check_c_string at each seam where a caller's bytes become a C string: a
// NUL byte there would cut the string short and silently name something
// else (a host, a file, a socket, a program's argument, the name a
// certificate is checked against). Each case below names a thing that
// exists up to the NUL, so a seam that truncated would succeed instead of
// throwing ValueError.
#include <cstdio>
#include <map>

#include <sys/stat.h>

#include "common/temp_dir.hpp"
#include "common/value_error.hpp"
#include "net/tls_support.hpp"
#include <corio/file.hpp>
#include <corio/subprocess.hpp>

namespace corio_net_test {
namespace {

const std::string kCut("\0.evil", 6);

// Whether awaiting what make() starts throws ValueError naming the NUL.
template <class F>
Coro<bool> refused(F make) {
  return corio_testing::raises_value_error(std::move(make), "NUL");
}

Coro<void> hosts_and_sockets(const corio_testing::TempDir* dir) {
  Server tcp = co_await corio::start_server(echo_lines, "127.0.0.1", 0);
  EXPECT_TRUE(
      co_await refused([&] { return corio::open_connection("127.0.0.1" + kCut, tcp.port()); }));
  EXPECT_TRUE(co_await refused([&] { return corio::getaddrinfo("localhost" + kCut, 80); }));
  EXPECT_THROW(SocketAddress::ip("127.0.0.1" + kCut, 1), corio::ValueError);

  const std::string path = (dir->path() / "sock").string();
  Server unix_server = co_await corio::start_unix_server(echo_lines, path);
  EXPECT_TRUE(co_await refused([&] { return corio::open_unix_connection(path + kCut); }));
  EXPECT_TRUE(co_await refused([&] { return corio::start_unix_server(echo_lines, path + kCut); }));
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << "the socket file was taken for a stale one";
  tcp.close();
  unix_server.close();
}

TEST(CString, HostsAndSocketPathsRefuseNul) {
  corio_testing::TempDir dir;
  run_bounded(hosts_and_sockets(&dir));
}

Coro<void> files_and_processes(const corio_testing::TempDir* dir) {
  const std::string file = (dir->path() / "f").string();
  std::fclose(std::fopen(file.c_str(), "w"));
  EXPECT_TRUE(co_await refused([&] { return corio::open_file(file + kCut, "r"); }));

  const std::vector<std::string> args{"x" + kCut};
  EXPECT_TRUE(co_await refused([&] { return corio::create_subprocess_exec("true", args); }));
  EXPECT_TRUE(co_await refused([&] { return corio::create_subprocess_exec("true" + kCut, {}); }));
  corio::SubprocessOptions in_dir;
  in_dir.cwd = dir->path().string() + kCut;
  EXPECT_TRUE(co_await refused([&] { return corio::create_subprocess_exec("true", {}, in_dir); }));
  corio::SubprocessOptions with_env;
  with_env.env = std::map<std::string, std::string>{{"A", "b" + kCut}};
  EXPECT_TRUE(
      co_await refused([&] { return corio::create_subprocess_exec("true", {}, with_env); }));
}

TEST(CString, FilePathsAndProcessArgumentsRefuseNul) {
  corio_testing::TempDir dir;
  run_bounded(files_and_processes(&dir));
}

Coro<void> tls_names() {
  Server server = co_await tls_echo_server();
  corio::ConnectOptions opts = tls_options();
  opts.server_hostname = "localhost" + kCut;  // checked as "localhost" if cut
  EXPECT_TRUE(
      co_await refused([&] { return corio::open_connection("127.0.0.1", server.port(), opts); }));
  server.close();
}

TEST(CString, TlsNamesAndFilesRefuseNul) {
  run_bounded(tls_names());
  corio::SslContext client = corio::SslContext::client();
  EXPECT_THROW(client.load_verify_locations(pki().ca_cert + kCut), corio::ValueError);
  EXPECT_THROW(corio::SslContext::server(pki().server_cert + kCut, pki().server_key),
               corio::ValueError);
}

}  // namespace
}  // namespace corio_net_test
