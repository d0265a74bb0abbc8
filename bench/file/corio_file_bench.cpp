// corio's file reads for bench/file/file_suite.py: 4 KiB random preads at a
// queue depth (that many tasks, each awaiting one pread at a time) and 1 MiB
// sequential reads (read(1 MiB) to the end of the file, then again from the
// start), on corio::AsyncFile, for a fixed time. The file is the suite's, in
// the page cache, as fio's runs read it. Prints one JSON line per metric:
// operations per second and the process's CPU (loop + pool threads) per op,
// as "corio" on epoll (the reads on the thread pool) and "corio-uring" on
// io_uring (the reads in the ring), whichever the loop runs on (CORIO_BACKEND).
//
// Usage: corio_file_bench --file PATH --pattern rand4k|seq1m [--depth N] [--seconds S]
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <corio/corio.hpp>
#include <corio/file.hpp>

namespace {

struct Options {
  std::string file;
  std::string pattern = "rand4k";
  int depth = 1;
  double seconds = 2.0;
};

double cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

corio::Coro<void> random_reads(corio::AsyncFile& f, std::uint64_t blocks, double until, unsigned seed,
                               std::uint64_t& ops) {
  std::mt19937_64 rng(seed);
  corio::EventLoop& loop = corio::get_running_loop();
  while (loop.time() < until) {
    std::string b = co_await f.pread((rng() % blocks) * 4096, 4096);
    if (b.size() != 4096) throw std::runtime_error("short pread");
    ++ops;
  }
}

corio::Coro<std::uint64_t> sequential_reads(std::string path, double until) {
  corio::EventLoop& loop = corio::get_running_loop();
  std::uint64_t ops = 0;
  while (loop.time() < until) {
    corio::AsyncFile f = co_await corio::open_file(path, "rb");
    while (loop.time() < until) {
      std::string b = co_await f.read(1 << 20);
      if (b.empty()) break;
      ++ops;
    }
    co_await f.close();
  }
  co_return ops;
}

corio::Coro<void> bench(Options o) {
  struct stat st {};
  if (::stat(o.file.c_str(), &st) != 0) throw std::runtime_error("no file " + o.file);
  corio::EventLoop& loop = corio::get_running_loop();
  corio::AsyncFile f = co_await corio::open_file(o.file, "rb");
  co_await f.pread(0, 4096);  // the pool's first thread is up before the clock starts
  const double cpu0 = cpu_seconds(), t0 = loop.time(), until = t0 + o.seconds;
  std::uint64_t ops = 0;
  std::string metric;
  if (o.pattern == "rand4k") {
    std::vector<std::uint64_t> per(std::size_t(o.depth), 0);
    std::vector<corio::Coro<void>> workers;
    for (int i = 0; i < o.depth; ++i) {
      workers.push_back(random_reads(f, std::uint64_t(st.st_size) / 4096, until, unsigned(i + 1), per[i]));
    }
    co_await corio::gather(std::move(workers));
    for (auto n : per) ops += n;
    metric = "file_rand4k_qd" + std::to_string(o.depth);
  } else {
    ops = co_await sequential_reads(o.file, until);
    metric = "file_seq1m";
  }
  const double wall = loop.time() - t0, cpu = cpu_seconds() - cpu0;
  co_await f.close();
  const char* impl = std::strcmp(loop.backend_name(), "io_uring") == 0 ? "corio-uring" : "corio";
  std::printf("{\"impl\": \"%s\", \"metric\": \"%s_ops\", \"value\": %.1f, \"unit\": \"op/s\"}\n",
              impl, metric.c_str(), double(ops) / wall);
  std::printf("{\"impl\": \"%s\", \"metric\": \"%s_cpu_us\", \"value\": %.3f, \"unit\": \"us/op\"}\n",
              impl, metric.c_str(), cpu * 1e6 / double(ops));
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--file") o.file = v;
    else if (k == "--pattern") o.pattern = v;
    else if (k == "--depth") o.depth = std::atoi(v.c_str());
    else if (k == "--seconds") o.seconds = std::atof(v.c_str());
    else o.file.clear();
  }
  if (o.file.empty() || (o.pattern != "rand4k" && o.pattern != "seq1m") || o.depth < 1 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: corio_file_bench --file PATH --pattern rand4k|seq1m [--depth N] [--seconds S]\n");
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) { return corio::run_main(bench(parse(argc, argv))); }
