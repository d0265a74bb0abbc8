// Section 11: the tutorials' "team news" fetch. A local server answers each page
// after a delay; five pages are fetched one after another (blocking
// sockets), with five threads, and with five tasks on one thread.
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>
#include <thread>
#include <vector>

#include "demo.hpp"

namespace corio_cli::demo {

namespace {

constexpr int kTeams = 5;

std::string page_of(int team) { return fmt::format("<h1>Team {} news</h1>", team); }

std::string request_for(int team) { return fmt::format("GET /team/{} HTTP/1.0\r\n\r\n", team); }

// The body of an HTTP/1.0 response read to EOF ("" if malformed).
std::string body_of(const std::string& response) {
  const std::size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? std::string() : response.substr(end + 4);
}

// ---- the server: its own thread, its own loop ---------------------------------------

corio::Coro<> answer(corio::StreamReader reader, corio::StreamWriter writer, Seconds delay) {
  const std::string head = co_await reader.readuntil("\r\n\r\n");  // "GET /team/N HTTP/1.0"
  co_await corio::sleep(delay);                                     // a slow backend
  const int team = std::atoi(head.c_str() + head.find("/team/") + 6);
  const std::string body = page_of(team);
  writer.write(fmt::format("HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{}", body.size(), body));
  writer.close();
  co_await writer.wait_closed();
}

struct ServerLink {
  std::promise<std::pair<corio::EventLoop*, std::uint16_t>> started;
  corio::Event* stop = nullptr;
};

corio::Coro<> serve(ServerLink* link, Seconds delay) {
  corio::ClientConnected handler = [delay](corio::StreamReader r, corio::StreamWriter w) {
    return answer(std::move(r), std::move(w), delay);
  };
  corio::Server server = co_await corio::start_server(handler, "127.0.0.1", 0);
  corio::Event stop;
  link->stop = &stop;
  link->started.set_value({&corio::get_running_loop(), server.port()});
  co_await stop.wait();
  server.close();
  co_await server.wait_closed();
}

// Runs serve() on a thread of its own; stops it when destroyed.
class NewsServer {
 public:
  explicit NewsServer(Seconds delay) : thread_([this, delay] { corio::run(serve(&link_, delay)); }) {
    auto [loop, port] = link_.started.get_future().get();
    loop_ = loop;
    port_ = port;
  }
  ~NewsServer() {
    corio::Event* stop = link_.stop;
    loop_->call_soon_threadsafe([stop] { stop->set(); });
    thread_.join();
  }
  std::uint16_t port() const { return port_; }

 private:
  ServerLink link_;
  std::thread thread_;
  corio::EventLoop* loop_ = nullptr;
  std::uint16_t port_ = 0;
};

// ---- the clients ------------------------------------------------------------------------

// What requests.get() does: a blocking socket, the thread waits in recv().
std::string fetch_blocking(std::uint16_t port, int team) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const corio::SocketAddress addr = corio::SocketAddress::ip("127.0.0.1", port);
  std::string response;
  if (fd >= 0 && ::connect(fd, addr.data(), addr.size()) == 0) {
    const std::string req = request_for(team);
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) response.append(buf, n);
    }
  }
  if (fd >= 0) ::close(fd);
  return body_of(response);
}

corio::Coro<std::string> fetch(std::uint16_t port, int team) {
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", port);
  writer.write(request_for(team));
  const std::string response = co_await reader.read();
  writer.close();
  co_await writer.wait_closed();
  co_return body_of(response);
}

std::size_t heap_in_use() { return mallinfo2().uordblks; }

std::size_t default_thread_stack() {
  pthread_attr_t attr;
  std::size_t size = 0;
  if (pthread_attr_init(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
  }
  return size;
}

void check_pages(Demo& demo, const std::vector<std::string>& pages) {
  for (int i = 0; i < kTeams; ++i) {
    demo.expect(pages[static_cast<std::size_t>(i)] == page_of(i + 1),
                fmt::format("team {} page came back wrong", i + 1));
  }
}

}  // namespace

corio::Coro<> news_section(Demo& demo) {
  const Seconds delay(0.5);
  demo.explain(fmt::format(
      "A local news server answers each page after {} s. Five team pages, three ways.",
      Demo::text(delay)));
  NewsServer server(delay);
  const std::uint16_t port = server.port();

  demo.part("one after another, blocking sockets (requests.get in a loop)");
  std::vector<std::string> pages;
  for (int team = 1; team <= kTeams; ++team) pages.push_back(fetch_blocking(port, team));
  check_pages(demo, pages);
  const double sequential = demo.elapsed();
  demo.elapsed_line("five waits in a row");
  demo.expect(sequential >= 0.9 * kTeams * delay.count(), "sequential fetches overlapped?");

  demo.part("five threads (ThreadPoolExecutor(5) + run_in_executor)");
  {
    corio::ThreadPoolExecutor pool(kTeams);
    corio::EventLoop& loop = corio::get_running_loop();
    std::vector<corio::Future<std::string>> calls;
    for (int team = 1; team <= kTeams; ++team) {
      calls.push_back(loop.run_in_executor(&pool, [port, team] { return fetch_blocking(port, team); }));
    }
    pages.clear();
    for (auto& call : calls) pages.push_back(co_await call);
    check_pages(demo, pages);
    demo.out("memory: {} thread stacks, {} MiB of address space reserved", kTeams,
             kTeams * default_thread_stack() >> 20);
  }
  demo.expect(demo.elapsed() < 2.5 * delay.count(), "the threads did not overlap");
  demo.elapsed_line("the five waits overlap, one thread each");

  demo.part("five tasks on one thread (asyncio.gather)");
  const std::size_t heap_before = heap_in_use();
  std::vector<corio::Coro<std::string>> fetches;
  for (int team = 1; team <= kTeams; ++team) fetches.push_back(fetch(port, team));
  corio::Task<std::vector<std::string>> all = corio::create_task(corio::gather(std::move(fetches)));
  co_await corio::sleep(delay / 2);  // every fetch is now waiting for its page
  const std::size_t heap_waiting = heap_in_use();
  pages = co_await all;
  check_pages(demo, pages);
  demo.out("memory: {} tasks waiting, {} KiB of heap (frames, buffers, sockets' state)", kTeams,
           (heap_waiting > heap_before ? heap_waiting - heap_before : 0) >> 10);
  demo.expect(demo.elapsed() < 2.5 * delay.count(), "the tasks did not overlap");
  demo.elapsed_line("the five waits overlap on one thread");
}

}  // namespace corio_cli::demo
