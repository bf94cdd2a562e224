// The catalogue of bad experiment files (tests/experiment/bad/*.yaml): each file's first line
// is `# expect: <fragment>`, and parsing it must fail with a message containing that fragment.
#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tests/experiment/experiment_test_util.hpp"

namespace {

const std::string kBadDir = std::string(TROUPE_SOURCE_DIR) + "/tests/experiment/bad";

std::vector<std::string> catalogue() {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(kBadDir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 5 && name.substr(name.size() - 5) == ".yaml") names.push_back(name);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(ExperimentCatalogue, HasAtLeastTwentyBadFiles) { EXPECT_GE(catalogue().size(), 20u); }

TEST(ExperimentCatalogue, EveryBadFileFailsNamingItsKey) {
  for (const auto& name : catalogue()) {
    SCOPED_TRACE(name);
    std::string text = read_file(kBadDir + "/" + name);
    const std::string marker = "# expect: ";
    ASSERT_EQ(text.compare(0, marker.size(), marker), 0) << "line 1 must be '# expect: ...'";
    std::string expected = text.substr(marker.size(), text.find('\n') - marker.size());
    try {
      troupe::experiment::parse_experiment(text, "bad.yaml");
      ADD_FAILURE() << name << " parsed without error";
    } catch (const troupe::Error& e) {
      EXPECT_EQ(e.code(), troupe::Code::invalid_argument);
      std::string what = e.what();
      EXPECT_NE(what.find(expected), std::string::npos) << "got: " << what;
      // Every message leads with where: "bad.yaml:LINE:COLUMN: ".
      EXPECT_EQ(what.compare(0, 9, "bad.yaml:"), 0) << what;
    }
  }
}
