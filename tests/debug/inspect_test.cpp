// The inspection socket in process (inspect.hpp): it exists only when asked
// for, with its modes, answers ps/pstree/stats, bounds its requests, refuses
// another uid (SO_PEERCRED), and is gone once the loop closes. The blocking
// client runs on a thread (to_thread) while the loop serves it.
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <corio/corio.hpp>
#include <corio/detail/sanitizers.hpp>

#include "common/temp_dir.hpp"

namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Each test gets its own XDG_RUNTIME_DIR (so its own socket directory) and no
// CORIO_INSPECT from the environment running the tests.
class InspectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("CORIO_INSPECT");
    ::setenv("XDG_RUNTIME_DIR", dir_.path().c_str(), 1);
  }
  void TearDown() override { ::unsetenv("XDG_RUNTIME_DIR"); }

  static std::string path() { return corio::inspect_socket_path(::getpid()); }

  corio_testing::TempDir dir_;
};

int socket_fds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (dirent* e = ::readdir(d)) {
    char target[64] = {};
    const std::string link = std::string("/proc/self/fd/") + e->d_name;
    if (::readlink(link.c_str(), target, sizeof target - 1) > 0 &&
        std::strncmp(target, "socket:", 7) == 0)
      ++n;
  }
  ::closedir(d);
  return n;
}

int connect_to(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

// One exchange as `corio ps` makes it, blocking (on a thread).
std::string ask(std::string path, std::string request) {
  const int fd = connect_to(path);
  if (fd < 0) return "connect failed: " + std::string(std::strerror(errno));
  [[maybe_unused]] ssize_t n = ::write(fd, request.data(), request.size());
  std::string answer = read_all(fd);
  ::close(fd);
  return answer;
}

corio::RunOptions inspecting() {
  corio::RunOptions opts;
  opts.inspect = true;
  return opts;
}

corio::Coro<> wait_for_event(corio::Event& ev) { co_await ev.wait(); }

corio::Coro<> nap() { co_await corio::sleep(1ms); }

corio::Coro<std::string> ask_on_thread(std::string request) {
  co_return co_await corio::to_thread(ask, corio::inspect_socket_path(::getpid()), request);
}

TEST_F(InspectTest, WithoutInspectNothingIsOpened) {
  const int before = socket_fds();
  corio::EventLoop loop;
  loop.run_until_complete(nap());
  EXPECT_EQ(socket_fds(), before);
  struct stat st {};
  EXPECT_NE(::stat(corio::inspect_directory().c_str(), &st), 0) << "the socket directory was made";
}

TEST_F(InspectTest, TheSocketIsPrivateAndGoneAfterClose) {
  const int before = socket_fds();
  {
    corio::EventLoop loop(inspecting());
    struct stat st {};
    ASSERT_EQ(::stat(path().c_str(), &st), 0) << path();
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_EQ(::stat(corio::inspect_directory().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(socket_fds(), before + 1);
    loop.close();
    EXPECT_NE(::stat(path().c_str(), &st), 0) << "the socket outlived the loop";
  }
  EXPECT_EQ(socket_fds(), before);
}

TEST_F(InspectTest, CorioInspectInTheEnvironmentTurnsItOn) {
  ::setenv("CORIO_INSPECT", "1", 1);
  corio::EventLoop loop;
  ::unsetenv("CORIO_INSPECT");
  struct stat st {};
  EXPECT_EQ(::stat(path().c_str(), &st), 0);
}

TEST_F(InspectTest, OneLoopPerProcessServes) {
  corio::EventLoop first(inspecting());
  corio::EventLoop second(inspecting());
  second.close();  // not the server: the first loop's socket stays
  struct stat st {};
  EXPECT_EQ(::stat(path().c_str(), &st), 0);
}

corio::Coro<> await_task(corio::Task<> t) { co_await t; }

// The answer to request while task 2, "waiter", waits on an event and task 3,
// "parent", awaits it (task 1 awaits the answer).
corio::Coro<std::string> answer_with_waiter(std::string request) {
  corio::Event ev;
  corio::Task<> waiter = corio::create_task(wait_for_event(ev), "waiter");
  corio::Task<> parent = corio::create_task(await_task(waiter), "parent");
  co_await corio::sleep(0s);  // both suspend
  std::string answer = co_await ask_on_thread(request);
  ev.set();
  co_await parent;
  co_return answer;
}

TEST_F(InspectTest, PsNamesEachTaskItsStateAndWhere) {
  corio::EventLoop loop(inspecting());
  const std::string ps = loop.run_until_complete(answer_with_waiter("ps\n"));
  EXPECT_THAT(ps, StartsWith("  ID  NAME"));
  // wait_for_event's co_await is the line the waiter is suspended at.
  EXPECT_THAT(ps, ::testing::ContainsRegex("waiter +suspended +inspect_test.cpp:[0-9]+ +event 0x"));
  EXPECT_THAT(ps, ::testing::ContainsRegex("Task-1 +suspended"));
  const std::string json = loop.run_until_complete(answer_with_waiter("ps json\n"));
  EXPECT_THAT(json, HasSubstr("\"name\":\"waiter\",\"state\":\"suspended\""));
  EXPECT_THAT(json, HasSubstr("\"awaiting_kind\":\"event\""));
  EXPECT_THAT(json, ::testing::ContainsRegex("\"function\":\"[^\"]*wait_for_event"));
}

TEST_F(InspectTest, PstreeShowsWhoAwaitsWhom) {
  corio::EventLoop loop(inspecting());
  const std::string tree = loop.run_until_complete(answer_with_waiter("pstree\n"));
  // The waiter hangs below the parent, with its own chain, indented.
  EXPECT_THAT(tree, ::testing::ContainsRegex(
                        "\n\\* Task\\(name='parent', id=3\\) awaiting task on Task\\(name='waiter', "
                        "id=2\\)\n\\+ Call stack:\n\\|   File '[^']*inspect_test.cpp', line [0-9]+, in [^\n]*"
                        "await_task[^\n]*\n\\+ Awaits:\n   \\* Task\\(name='waiter', id=2\\) awaiting event "
                        "[^\n]*\n   \\+ Call stack:\n   \\|   File '[^']*inspect_test.cpp', line [0-9]+, in "
                        "[^\n]*wait_for_event"))
      << tree;
  // Shown once, under its awaiter, not again as a root.
  EXPECT_EQ(tree.find("* Task(name='waiter'"), tree.rfind("* Task(name='waiter'"));
}

corio::Coro<std::string> recv_some(corio::Socket* s) {
  co_return co_await corio::get_running_loop().sock_recv(*s, 16);
}

// The answers to `ps` and `ps json` while task "reader" waits to read from
// a loopback connection to *server ("127.0.0.1:port").
corio::Coro<std::pair<std::string, std::string>> answers_with_reader(std::string* server) {
  corio::EventLoop& loop = corio::get_running_loop();
  corio::Socket listener = corio::Socket::create(AF_INET, SOCK_STREAM);
  listener.bind(corio::SocketAddress::ip("127.0.0.1", 0));
  listener.listen();
  *server = listener.local_address().to_string();
  corio::Socket client = corio::Socket::create(AF_INET, SOCK_STREAM);
  co_await loop.sock_connect(client, listener.local_address());
  auto [conn, from] = co_await loop.sock_accept(listener);
  corio::Task<std::string> reader = corio::create_task(recv_some(&client), "reader");
  co_await corio::sleep(0s);
  std::string text = co_await ask_on_thread("ps\n");
  std::string json = co_await ask_on_thread("ps json\n");
  co_await loop.sock_sendall(conn, "z");
  co_await reader;
  co_return std::pair{std::move(text), std::move(json)};
}

TEST_F(InspectTest, PsNamesASocketsPeer) {
  corio::EventLoop loop(inspecting());
  std::string server;
  const auto [text, json] = loop.run_until_complete(answers_with_reader(&server));
  // Where: the innermost co_await outside corio's detail namespace (sock_recv's).
  EXPECT_THAT(text, ::testing::ContainsRegex("reader +suspended +[a-z_]+\\.cpp:[0-9]+ +socket fd "
                                             "[0-9]+ \\(read\\) peer 127\\.0\\.0\\.1:" +
                                             server.substr(server.find(':') + 1) + "\n"))
      << text;
  EXPECT_THAT(json, HasSubstr(",\"write\":false,\"peer\":\"" + server + "\",\"local\":\"127.0.0.1:"))
      << json;
  EXPECT_THAT(json, ::testing::ContainsRegex("\"awaiting_kind\":\"socket\",\"fd\":[0-9]+,"))
      << json;
  EXPECT_THAT(json, HasSubstr(",\"listening\":false,\"stack\":[")) << json;
}

TEST_F(InspectTest, StatsAreTheLoopCounters) {
  corio::EventLoop loop(inspecting());
  const std::string stats = loop.run_until_complete(answer_with_waiter("stats\n"));
  EXPECT_THAT(stats, HasSubstr("\ntasks_alive    3\n"));
  EXPECT_THAT(stats, StartsWith("iterations     "));
  const std::string json = loop.run_until_complete(answer_with_waiter("stats json\n"));
  EXPECT_THAT(json, ::testing::MatchesRegex("\\{\"iterations\":[0-9]+,.*\"tasks_alive\":3,.*\\}\n"));
}

TEST_F(InspectTest, BadRequestsGetAnError) {
  corio::EventLoop loop(inspecting());
  EXPECT_EQ(loop.run_until_complete(ask_on_thread("top\n")),
            "error: unknown request 'top' (ps, pstree or stats, then json or nothing)\n");
  EXPECT_EQ(loop.run_until_complete(ask_on_thread("ps xml\n")),
            "error: unknown format 'xml' (json, or nothing for text)\n");
  // No newline within the bound: refused, not buffered without end.
  EXPECT_EQ(loop.run_until_complete(ask_on_thread(std::string(300, 'p'))),
            "error: a request is one line of at most 256 bytes\n");
}

corio::Coro<std::string> ask_past_a_silent_client() {
  const int silent = co_await corio::to_thread(connect_to, corio::inspect_socket_path(::getpid()));
  std::string answer = co_await ask_on_thread("ps\n");
  ::close(silent);
  co_return answer;
}

TEST_F(InspectTest, ASilentClientDoesNotHoldOthersUp) {
  corio::EventLoop loop(inspecting());
  EXPECT_THAT(loop.run_until_complete(ask_past_a_silent_client()), StartsWith("  ID  NAME"));
}

corio::Coro<> nap_for(std::chrono::milliseconds d) { co_await corio::sleep(d); }

// Out of fds, a connection waiting in the backlog keeps the listener
// readable: the loop must not spin on it, and must serve it once fds are back.
TEST_F(InspectTest, OutOfFdsTheLoopPausesAcceptingAndServesLater) {
#if defined(CORIO_ASAN)
  // UBSan's vptr check opens a pipe to probe memory it has not seen; with no
  // fd left it takes every object for a bad one and reports a false error.
  GTEST_SKIP() << "the sanitizer runtime needs file descriptors of its own";
#endif
  corio::EventLoop loop(inspecting());
  const int client = connect_to(path());
  ASSERT_GE(client, 0);
  ASSERT_EQ(::write(client, "stats\n", 6), 6);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int lowest_free = ::dup(0);
  ::close(lowest_free);
  rlimit tight = saved;
  tight.rlim_cur = static_cast<rlim_t>(lowest_free);  // accept4 gets EMFILE
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  const std::uint64_t before = loop.stats().iterations;
  loop.run_until_complete(nap_for(300ms));
  const std::uint64_t spun = loop.stats().iterations - before;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  // A pause of 100 ms: a handful of turns, where a spinning loop makes many thousands.
  EXPECT_LT(spun, 100u);
  loop.run_until_complete(nap_for(300ms));
  EXPECT_THAT(read_all(client), HasSubstr("iterations"));
  ::close(client);
}

corio::Coro<> wait_forever() {
  corio::Event never;
  co_await never.wait();
}

TEST_F(InspectTest, TheSocketDoesNotHideADeadlock) {
  // Its listener is a watched fd, yet no task can be woken through it.
  corio::RunOptions opts = inspecting();
  opts.on_deadlock = corio::OnDeadlock::raise;
  corio::EventLoop loop(opts);
  EXPECT_THROW(loop.run_until_complete(wait_forever()), corio::DeadlockError);
}

// The child connects as `nobody` and reports what it got: 0 refused by the
// server, 1 answered, 2 could not connect (the file modes kept it out), 3
// could not drop privileges. Only async-signal-safe calls after fork.
[[noreturn]] void connect_as_nobody(const char* path) {
  if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) ::_exit(3);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) ::_exit(2);
  [[maybe_unused]] ssize_t w = ::write(fd, "ps\n", 3);
  char buf[256] = {};
  ssize_t got = 0;
  for (ssize_t n; got < 255 && (n = ::read(fd, buf + got, 255 - static_cast<std::size_t>(got))) > 0;)
    got += n;
  ::_exit(std::strncmp(buf, "error: permission denied: uid 65534", 35) == 0 ? 0 : 1);
}

int wait_child(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

corio::Coro<int> nobody_connects() {
  const std::string path = corio::inspect_socket_path(::getpid());
  const pid_t child = ::fork();
  if (child == 0) connect_as_nobody(path.c_str());
  co_return co_await corio::to_thread(wait_child, child);
}

TEST_F(InspectTest, AnotherUidIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "dropping to another uid needs root";
  // Directly under /tmp, which nobody can reach (the test's own temporary
  // directory may sit in a private one), and open to all: only the socket's
  // own directory and modes are under test.
  char open_dir[] = "/tmp/corio-inspect-XXXXXX";
  ASSERT_NE(::mkdtemp(open_dir), nullptr);
  struct Cleanup {
    const char* dir;
    ~Cleanup() { std::filesystem::remove_all(dir); }
  } cleanup{open_dir};
  ASSERT_EQ(::chmod(open_dir, 0755), 0);
  ::setenv("XDG_RUNTIME_DIR", open_dir, 1);
  corio::EventLoop loop(inspecting());
  // The file modes keep another user out of the directory...
  EXPECT_EQ(loop.run_until_complete(nobody_connects()), 2);
  // ... and past them (a directory opened up by mistake), SO_PEERCRED does.
  ASSERT_EQ(::chmod(corio::inspect_directory().c_str(), 0777), 0);
  ASSERT_EQ(::chmod(path().c_str(), 0666), 0);
  EXPECT_EQ(loop.run_until_complete(nobody_connects()), 0);
  // The owner is still served.
  EXPECT_THAT(loop.run_until_complete(ask_on_thread("ps\n")), StartsWith("  ID  NAME"));
}

}  // namespace
