// `corio`: the command-line tool. This file is the only one that includes
// CLI11 (see commands.hpp); each subcommand lives in its own .cpp.
//
// Usage errors follow git's and argparse's conventions: the unknown word is
// named with the nearest valid one ("unknown command 'fech'; did you mean
// 'fetch'?"), a value of the wrong type says what was expected, and the exit
// code is 2. `corio help CMD` is `corio CMD --help`, whose last line is an
// example.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/format.h>

#include "commands.hpp"
#include <corio/errors.hpp>

namespace {

constexpr int kUsageError = 2;  // argparse's and most Unix tools' code for a bad command line

// A validator that first checks the text is a number of type T, then the range:
// CLI11's Range alone says "not in range" for "abc".
template <class T>
CLI::Validator number_in(T min, T max, std::string_view what) {
  return CLI::Validator(
      [min, max, what](std::string& text) -> std::string {
        T value{};
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end) return fmt::format("'{}' is not {}", text, what);
        if (value < min || value > max) return fmt::format("{} is not in {}-{}", text, min, max);
        return {};
      },
      fmt::format("{} in {}-{}", what, min, max));
}

// corio_cli::Options on top of one CLI11 subcommand.
class CliOptions final : public corio_cli::Options {
 public:
  explicit CliOptions(CLI::App& app) : app_(app) {}

  void flag(const std::string& name, bool& target, const std::string& help) override {
    app_.add_flag(name, target, help);
  }
  void option(const std::string& name, int& target, const std::string& help, int min,
              int max) override {
    app_.add_option(name, target, help)->check(number_in(min, max, "a whole number"));
  }
  void option(const std::string& name, double& target, const std::string& help, double min,
              double max) override {
    app_.add_option(name, target, help)->check(number_in(min, max, "a number"));
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

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "; did you mean 'fetch'?" for the nearest candidate close enough to be a typo.
std::string suggestion(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) best = &c, best_distance = d;
  }
  return best ? fmt::format("; did you mean '{}'?", *best) : "";
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> option_names(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
  }
  return names;
}

// "corio fetch: unknown option ..." for the command whose line was wrong.
int usage_error(const std::string& where, const std::string& message) {
  fmt::print(stderr, "{}: {}\n(see '{} --help')\n", where, message, where);
  return kUsageError;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The first word after `corio` must be a command or one of corio's own
// options: name the wrong one (CLI11 would say "A subcommand is required").
std::optional<int> check_command(CLI::App& app, int argc, char** argv) {
  const std::vector<std::string> names = command_names(app);
  if (argc < 2) {
    return usage_error("corio", fmt::format("a command is required: {}", fmt::join(names, ", ")));
  }
  const std::string word = argv[1];
  if (word[0] == '-') {
    const std::string name = word.substr(0, word.find('='));
    const std::vector<std::string> options = option_names(app);
    if (contains(options, name)) return std::nullopt;
    return usage_error("corio", fmt::format("unknown option '{}'{}", name, suggestion(name, options)));
  }
  if (contains(names, word)) return std::nullopt;
  return usage_error("corio", fmt::format("unknown command '{}'{}", word, suggestion(word, names)));
}

// What the parser left over (allow_extras): an option nobody declared, or an
// argument too many.
std::optional<int> check_leftovers(CLI::App& app) {
  std::vector<CLI::App*> scopes{&app};
  for (CLI::App* sub : app.get_subcommands()) scopes.push_back(sub);
  for (CLI::App* scope : scopes) {
    for (const std::string& word : scope->remaining()) {
      const std::string where = scope == &app ? "corio" : "corio " + scope->get_name();
      if (word.size() > 1 && word[0] == '-') {
        const std::string name = word.substr(0, word.find('='));
        return usage_error(where, fmt::format("unknown option '{}'{}", name,
                                              suggestion(name, option_names(*scope))));
      }
      return usage_error(where, fmt::format("unexpected argument '{}'", word));
    }
  }
  return std::nullopt;
}

// `corio help [CMD]`.
int help(CLI::App& app, const std::string& topic) {
  if (topic.empty()) {
    // Not app.help(): with a subcommand parsed (help), it shows that one's.
    fmt::print("{}", app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal));
    return 0;
  }
  const std::vector<std::string> names = command_names(app);
  if (!contains(names, topic)) {
    return usage_error("corio help",
                       fmt::format("unknown command '{}'{}", topic, suggestion(topic, names)));
  }
  fmt::print("{}", app.get_subcommand(topic)->help(app.get_name()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"corio: asyncio's programming model in C++20 (one thread, one event loop)", "corio"};
  app.set_version_flag("--version", std::string("corio ") + corio_cli::kVersion);
  app.require_subcommand(1);
  app.allow_extras();
  app.footer("Run 'corio help COMMAND' for a command's options and an example.");

  // The commands own the variables their options write to: keep them alive
  // until their run() is over.
  std::vector<corio_cli::Command> commands;
  for (corio_cli::CommandFactory make : corio_cli::kCommands) commands.push_back(make());
  for (corio_cli::Command& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    sub->allow_extras();
    sub->footer("Example:\n  " + command.example);
    CliOptions options(*sub);
    if (command.options) command.options(options);
  }
  std::string help_topic;
  CLI::App* help_command = app.add_subcommand("help", "Show a command's options and an example");
  help_command->add_option("command", help_topic, "the command");
  help_command->footer("Example:\n  corio help fetch");

  if (std::optional<int> bad = check_command(app, argc, argv)) return *bad;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // The error belongs to the command being parsed, if there is one.
    std::string where = "corio";
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    return usage_error(where, e.what());
  }
  if (std::optional<int> bad = check_leftovers(app)) return *bad;
  if (app.got_subcommand(help_command)) return help(app, help_topic);

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
