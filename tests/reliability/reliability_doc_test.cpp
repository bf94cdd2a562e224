// docs/reliability.md lists exactly what the tests check: its catalogue section is rendered from
// cases.tsv, elsewhere.tsv and the bad-file directories, and must equal the rendering. Run
// `TROUPE_UPDATE_DOCS=1 build/bin/test_reliability --gtest_filter='ReliabilityDoc.*'` to rewrite
// the section after changing a catalogue.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "tests/reliability/catalogue.hpp"

namespace troupe::reliability {
namespace {

const std::string kSource = TROUPE_SOURCE_DIR;
const std::string kDoc = kSource + "/docs/reliability.md";
const std::string kBegin =
    "<!-- catalogue: generated from tests/reliability by "
    "TROUPE_UPDATE_DOCS=1 test_reliability --gtest_filter='ReliabilityDoc.*' -->\n";
const std::string kEnd = "<!-- catalogue: end -->\n";

std::string rendered() {
  return render_catalogue(parse_cases(read_text(kSource + "/tests/reliability/cases.tsv")),
                          parse_elsewhere(read_text(kSource + "/tests/reliability/elsewhere.tsv")),
                          bad_experiment_files(kSource), bad_cluster_files(kSource));
}

TEST(ReliabilityDoc, CatalogueSectionMatchesTheTests) {
  std::string doc = read_text(kDoc);
  size_t begin = doc.find(kBegin);
  size_t end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << kDoc << " lacks the line " << kBegin;
  ASSERT_NE(end, std::string::npos) << kDoc << " lacks the line " << kEnd;
  ASSERT_LT(begin, end);
  begin += kBegin.size();
  const std::string expected = rendered();
  if (std::getenv("TROUPE_UPDATE_DOCS")) {
    doc.replace(begin, end - begin, expected);
    std::ofstream(kDoc, std::ios::trunc) << doc;
    return;
  }
  EXPECT_EQ(doc.substr(begin, end - begin), expected)
      << kDoc << " is out of date; rewrite it with TROUPE_UPDATE_DOCS=1 test_reliability "
      << "--gtest_filter='ReliabilityDoc.*'";
}

TEST(ReliabilityDoc, EveryTestNamedElsewhereExists) {
  auto tests = parse_elsewhere(read_text(kSource + "/tests/reliability/elsewhere.tsv"));
  for (const auto& t : tests) {
    SCOPED_TRACE("elsewhere.tsv:" + std::to_string(t.line) + " " + t.test);
    auto dot = t.test.find('.');
    ASSERT_NE(dot, std::string::npos) << "not Suite.Name";
    std::string source;
    ASSERT_NO_THROW(source = read_text(kSource + "/" + t.file));
    const std::regex defined("TEST(_F|_P)?\\(\\s*" + t.test.substr(0, dot) + ",\\s*" +
                             t.test.substr(dot + 1) + "\\)");
    EXPECT_TRUE(std::regex_search(source, defined)) << t.file << " defines no " << t.test;
  }
  for (size_t i = 0; i < tests.size(); ++i)
    for (size_t j = i + 1; j < tests.size(); ++j)
      EXPECT_NE(tests[i].test, tests[j].test)
          << "listed twice (lines " << tests[i].line << ", " << tests[j].line << ")";
}

TEST(ReliabilityDoc, AtLeast120BadInputsAndFaultsEachWithItsErrorText) {
  auto cases = parse_cases(read_text(kSource + "/tests/reliability/cases.tsv"));
  auto elsewhere = parse_elsewhere(read_text(kSource + "/tests/reliability/elsewhere.tsv"));
  auto experiments = bad_experiment_files(kSource);
  auto clusters = bad_cluster_files(kSource);
  EXPECT_GE(cases.size() + elsewhere.size() + experiments.size() + clusters.size(), 120u);
  for (const auto& c : cases) EXPECT_GE(c.expect.size(), 8u) << c.id << ": a vague expectation";
  for (const auto& f : experiments) EXPECT_FALSE(f.expect.empty()) << f.name;
}

}  // namespace
}  // namespace troupe::reliability
