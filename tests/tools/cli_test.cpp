// The `corio` tool's command line: usage errors name what was wrong and
// suggest the nearest valid word, values of the wrong type say what was
// expected, and every command's help ends with an example.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <corio/version.hpp>

#include "tools/cli_support.hpp"

namespace corio_tools_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Cli, UnknownCommandIsNamedWithTheNearestOne) {
  const Ran ran = corio_cli({"fech", "http://127.0.0.1:1/"});
  EXPECT_EQ(ran.code, 2);
  EXPECT_THAT(ran.err, HasSubstr("unknown command 'fech'; did you mean 'fetch'?"));
}

TEST(Cli, UnknownCommandFarFromAnyIsNamedWithoutAGuess) {
  const Ran ran = corio_cli({"bogus"});
  EXPECT_EQ(ran.code, 2);
  EXPECT_THAT(ran.err, HasSubstr("unknown command 'bogus'"));
  EXPECT_THAT(ran.err, Not(HasSubstr("did you mean")));
}

TEST(Cli, NoCommandListsTheCommands) {
  const Ran ran = corio_cli({});
  EXPECT_EQ(ran.code, 2);
  EXPECT_THAT(ran.err, HasSubstr("a command is required: demo, echo-server, serve, fetch, ps, pstree, stats, help"));
}

TEST(Cli, UnknownOptionIsNamedWithTheNearestOne) {
  const Ran ran = corio_cli({"demo", "--sectoin", "3"});
  EXPECT_EQ(ran.code, 2);
  EXPECT_THAT(ran.err, HasSubstr("corio demo: unknown option '--sectoin'; did you mean '--section'?"));
  const Ran top = corio_cli({"--versoin"});
  EXPECT_EQ(top.code, 2);
  EXPECT_THAT(top.err, HasSubstr("unknown option '--versoin'; did you mean '--version'?"));
}

TEST(Cli, ExtraArgumentIsNamed) {
  const Ran ran = corio_cli({"demo", "seven"});
  EXPECT_EQ(ran.code, 2);
  EXPECT_THAT(ran.err, HasSubstr("unexpected argument 'seven'"));
}

TEST(Cli, TypeErrorsSayWhatWasExpected) {
  const Ran word = corio_cli({"demo", "--section", "abc"});
  EXPECT_EQ(word.code, 2);
  EXPECT_THAT(word.err, HasSubstr("--section: 'abc' is not a whole number"));
  const Ran range = corio_cli({"demo", "--section", "99"});
  EXPECT_EQ(range.code, 2);
  EXPECT_THAT(range.err, HasSubstr("--section: 99 is not in 1-15"));
  const Ran seconds = corio_cli({"fetch", "--timeout", "soon"});
  EXPECT_EQ(seconds.code, 2);
  EXPECT_THAT(seconds.err, HasSubstr("--timeout: 'soon' is not a number"));
}

TEST(Cli, VersionIsTheProjects) {
  const Ran ran = corio_cli({"--version"});
  EXPECT_EQ(ran.code, 0);
  EXPECT_EQ(ran.out, std::string("corio ") + CORIO_VERSION_STRING + "\n");
}

TEST(Cli, HelpCommandIsTheCommandsHelp) {
  const Ran help = corio_cli({"help", "fetch"});
  const Ran flag = corio_cli({"fetch", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.out, HasSubstr("Usage: corio fetch"));
  EXPECT_THAT(help.out, HasSubstr("--retries"));
  EXPECT_EQ(help.out, flag.out);
  const Ran all = corio_cli({"help"});
  EXPECT_EQ(all.code, 0);
  EXPECT_THAT(all.out, HasSubstr("Usage: corio"));
  EXPECT_THAT(all.out, HasSubstr("echo-server"));
  const Ran typo = corio_cli({"help", "serv"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_THAT(typo.err, HasSubstr("unknown command 'serv'; did you mean 'serve'?"));
}

TEST(Cli, EveryCommandsHelpShowsAnExample) {
  for (const char* command : {"demo", "echo-server", "serve", "fetch", "help"}) {
    const Ran ran = corio_cli({command, "--help"});
    EXPECT_EQ(ran.code, 0) << command;
    EXPECT_THAT(ran.out, HasSubstr(std::string("Example:\n  corio ") + command)) << command;
  }
}

}  // namespace
}  // namespace corio_tools_test
