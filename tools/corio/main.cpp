// `corio`: the command-line tool. This file is the only one that includes
// CLI11 (see commands.hpp); each subcommand lives in its own .cpp.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "commands.hpp"
#include <corio/errors.hpp>

namespace {

// corio_cli::Options on top of one CLI11 subcommand.
class CliOptions final : public corio_cli::Options {
 public:
  explicit CliOptions(CLI::App& app) : app_(app) {}

  void flag(const std::string& name, bool& target, const std::string& help) override {
    app_.add_flag(name, target, help);
  }
  void option(const std::string& name, int& target, const std::string& help, int min,
              int max) override {
    app_.add_option(name, target, help)->check(CLI::Range(min, max));
  }
  void option(const std::string& name, std::string& target, const std::string& help) override {
    app_.add_option(name, target, help);
  }
  void positional(const std::string& name, std::string& target, const std::string& help,
                  bool required) override {
    CLI::Option* opt = app_.add_option(name, target, help);
    if (required) opt->required();
  }
  void positionals(const std::string& name, std::vector<std::string>& target,
                   const std::string& help) override {
    app_.add_option(name, target, help);
  }

 private:
  CLI::App& app_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"corio: asyncio's programming model in C++20 (one thread, one event loop)", "corio"};
  app.set_version_flag("--version", std::string("corio ") + corio_cli::kVersion);
  app.require_subcommand(1);

  // The commands own the variables their options write to: keep them alive
  // until their run() is over.
  std::vector<corio_cli::Command> commands;
  for (corio_cli::CommandFactory make : corio_cli::kCommands) commands.push_back(make());
  for (corio_cli::Command& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    CliOptions options(*sub);
    if (command.options) command.options(options);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with 0; a usage error exits with 2, as
    // argparse and most Unix tools do (CLI11's own codes are 100 and up).
    return app.exit(e) == 0 ? 0 : 2;
  }

  for (corio_cli::Command& command : commands) {
    if (!app.got_subcommand(command.name)) continue;
    try {
      return command.run();
    } catch (const std::exception& e) {
      fmt::print(stderr, "corio {}: error: {}\n", command.name, e.what());
    } catch (const corio::CancelledError& e) {
      fmt::print(stderr, "corio {}: cancelled: {}\n", command.name, e.what());
    }
    return 1;
  }
  return 1;  // unreachable: require_subcommand(1) made the parser insist on one
}
