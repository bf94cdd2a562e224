// A malformed catalogue row is refused naming its line, so a typo in cases.tsv or elsewhere.tsv
// fails loudly instead of silently dropping a case.
#include <gtest/gtest.h>

#include "tests/reliability/catalogue.hpp"

namespace troupe::reliability {
namespace {

const std::string kHeader = "id\tarea\tfault\tsetup\tenv\tcommand\tdrive\texit\texpect\n";

std::string parse_error(const std::string& tsv) {
  try {
    parse_cases(tsv);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(CatalogueParse, ARowIsReadWithCommentsAndDashes) {
  auto cases = parse_cases("# comment\n" + kHeader +
                           "a_1\tcli\tbad\t-\t-\trun --x\t-\t2\tunrecognised option\n");
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].id, "a_1");
  EXPECT_EQ(cases[0].setup, "");
  EXPECT_EQ(cases[0].exit_code, 2);
  EXPECT_EQ(cases[0].line, 3);
}

TEST(CatalogueParse, MalformedRowsNameTheirLine) {
  EXPECT_EQ(parse_error("id\tfault\n"),
            "line 1: expected the header '" + kHeader.substr(0, kHeader.size() - 1) + "'");
  EXPECT_EQ(parse_error(kHeader + "a\tcli\tbad\t-\t-\trun\t-\t2\n"),
            "line 2: 8 columns, expected 9");
  EXPECT_EQ(parse_error(kHeader + "a\tcli\t\t-\t-\trun\t-\t2\tx\n"),
            "line 2: column 3 is empty (write - for none)");
  EXPECT_EQ(parse_error(kHeader + "A-1\tcli\tbad\t-\t-\trun\t-\t2\tx\n"),
            "line 2: id 'A-1' is not [a-z0-9_]+");
  EXPECT_EQ(parse_error(kHeader + "a\tcli\tbad\t-\t-\trun\t-\ttwo\tx\n"),
            "line 2: exit 'two' is not a number");
  EXPECT_EQ(
      parse_error(kHeader + "a\tcli\tbad\t-\t-\trun\t-\t2\tx\na\tcli\tbad\t-\t-\trun\t-\t2\tx\n"),
      "line 3: id 'a' repeats line 2");
  EXPECT_EQ(parse_error(kHeader + "a\tcli\tbad\t-\t-\trun\tKILL@x\t2\tx\n"),
            "line 2: drive 'KILL@x' is not -, TERM@PREFIX, INT@PREFIX or STDIN:TEXT");
  EXPECT_EQ(parse_error(""), "no header '" + kHeader.substr(0, kHeader.size() - 1) + "'");
}

TEST(CatalogueParse, UnescapeDecodesTheEscapesTheSetupUses) {
  EXPECT_EQ(unescape("a\\nb\\tc\\r\\\\d\\x41"), "a\nb\tc\r\\dA");
}

}  // namespace
}  // namespace troupe::reliability
