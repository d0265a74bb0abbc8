// Real database servers for the tests (tests/common/db_server.py does the
// work): a throwaway PostgreSQL or redis-server on a free loopback port in a
// temporary directory, stopped and removed when the object goes.
//
// shared_db_address(kind) is the one server of a test executable: CTest
// starts it once as a fixture and names its address file in
// CORIO_<KIND>_ADDRESS_FILE; a binary run by hand starts its own on first
// use and stops it at exit. Tests that restart or kill a server make their
// own DbServer so they never disturb the others.
#pragma once

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include <stdlib.h>

namespace corio_testing {

class DbServer {
 public:
  explicit DbServer(std::string kind) : kind_(std::move(kind)) {
    char tmpl[] = "/tmp/corio-db-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    run("start");
    std::ifstream in(dir_ + "/address");
    std::getline(in, address_);
  }
  DbServer(const DbServer&) = delete;
  ~DbServer() {
    try {
      run("stop");
    } catch (...) {  // a destructor: the directory is left behind at worst
    }
  }
  const std::string& address() const noexcept { return address_; }
  void restart() { run("restart"); }
  void stop() { run("stop"); }

 private:
  void run(const std::string& action) {
    const std::string cmd = "python3 " CORIO_TESTS_DIR "/common/db_server.py " + action + " " +
                            kind_ + " " + dir_ + " >/dev/null";
    if (std::system(cmd.c_str()) != 0) {
      throw std::runtime_error("db_server.py " + action + " " + kind_ + " failed");
    }
  }
  std::string kind_, dir_, address_;
};

// "pg" or "redis": the address of this executable's shared server.
inline std::string shared_db_address(const std::string& kind) {
  const std::string var = "CORIO_" + std::string(kind == "pg" ? "PG" : "REDIS") + "_ADDRESS_FILE";
  if (const char* file = std::getenv(var.c_str())) {
    std::ifstream in(file);
    std::string address;
    if (std::getline(in, address) && !address.empty()) return address;
  }
  static std::unique_ptr<DbServer> own;  // stopped at exit
  if (!own) own = std::make_unique<DbServer>(kind);
  return own->address();
}

}  // namespace corio_testing
