// Runs every row of tests/reliability/cases.tsv: the setup steps build real files in a fresh
// directory, then `troupe` runs as a child process and must exit with the row's code and print
// the row's error text.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/process/child_process.hpp"
#include "tests/reliability/catalogue.hpp"

namespace troupe::reliability {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using troupe::testing::TroupeProcess;

const std::string kSource = TROUPE_SOURCE_DIR;

std::vector<Case> parse_catalogue() {
  return parse_cases(read_text(kSource + "/tests/reliability/cases.tsv"));
}

// For the parameterized tests: a malformed cases.tsv gives no cases here and fails
// CasesTsv.ParsesAndHasCases with the parser's message instead of aborting test discovery.
std::vector<Case> catalogue_cases() {
  try {
    return parse_catalogue();
  } catch (const std::exception&) {
    return {};
  }
}

std::string substitute(std::string text, const std::string& dir) {
  for (size_t at; (at = text.find("{dir}")) != std::string::npos;) text.replace(at, 5, dir);
  for (size_t at; (at = text.find("{src}")) != std::string::npos;) text.replace(at, 5, kSource);
  return text;
}

// Space-separated words; '' is an empty word.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w == "''" ? "" : w);
  return out;
}

std::vector<std::string> split_steps(const std::string& setup) {
  std::vector<std::string> steps;
  size_t from = 0;
  while (from <= setup.size()) {
    size_t at = setup.find(" ; ", from);
    steps.push_back(setup.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) break;
    from = at + 3;
  }
  return steps;
}

std::vector<char> read_bytes(const std::string& path) {
  std::string text = read_text(path);
  return {text.begin(), text.end()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

// One setup step, its paths relative to `dir`:
//   file NAME TEXT       write TEXT (C escapes \n \t \xHH) to NAME
//   copy NAME SRC        copy SRC (relative to the source tree) to NAME
//   dir NAME / fifo NAME make a directory / a FIFO nobody writes
//   flip NAME OFFSET     invert the byte at OFFSET (negative: from the end)
//   truncate NAME SIZE   cut NAME to SIZE bytes (negative: drop that many from the end)
//   replace NAME |OLD|NEW| replace every OLD in NAME by NEW (any delimiter; C escapes decoded)
//   remove NAME          delete NAME
//   troupe ARGS...       run the binary, which must succeed (e.g. to make data or a run)
void run_setup_step(const std::string& step, const std::string& dir) {
  std::istringstream in(step);
  std::string verb, name;
  in >> verb >> name;
  std::string rest;
  std::getline(in, rest);
  if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
  const std::string path = dir + "/" + name;
  if (verb == "file") {
    write_bytes(path, unescape(substitute(rest, dir)));
  } else if (verb == "copy") {
    write_bytes(path, read_text(kSource + "/" + rest));  // relative data paths: beside the copy
  } else if (verb == "dir") {
    fs::create_directories(path);
  } else if (verb == "fifo") {
    if (::mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("mkfifo " + path);
  } else if (verb == "flip" || verb == "truncate") {
    auto bytes = read_bytes(path);
    long long n = std::stoll(rest);
    long long at = n < 0 ? (long long)bytes.size() + n : n;
    if (at < 0 || at >= (long long)bytes.size() + (verb == "truncate"))
      throw std::runtime_error(step + ": " + name + " has " + std::to_string(bytes.size()) +
                               " bytes");
    if (verb == "flip")
      bytes[size_t(at)] = char(~bytes[size_t(at)]);
    else
      bytes.resize(size_t(at));
    write_bytes(path, std::string(bytes.begin(), bytes.end()));
  } else if (verb == "replace") {
    const char delim = rest.empty() ? '|' : rest[0];
    size_t mid = rest.find(delim, 1), end = rest.rfind(delim);
    if (rest.size() < 3 || mid == std::string::npos || end <= mid)
      throw std::runtime_error(step + ": expected replace NAME |OLD|NEW|");
    const std::string from = unescape(rest.substr(1, mid - 1));
    const std::string to = unescape(rest.substr(mid + 1, end - mid - 1));
    std::string text = read_text(path);
    size_t count = 0;
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size(), ++count)
      text.replace(at, from.size(), to);
    if (count == 0) throw std::runtime_error(step + ": '" + from + "' is not in " + name);
    write_bytes(path, text);
  } else if (verb == "remove") {
    if (!fs::remove(path)) throw std::runtime_error(step + ": no " + path);
  } else if (verb == "troupe") {
    auto args = words(substitute(name + " " + rest, dir));
    TroupeProcess p(args);
    auto code = p.wait(60s);
    if (code != 0)
      throw std::runtime_error("setup `troupe " + name + " " + rest + "` failed (" +
                               (code ? std::to_string(*code) : "timeout") + "): " + p.err());
  } else {
    throw std::runtime_error("unknown setup step '" + step + "'");
  }
}

TEST(CasesTsv, ParsesAndHasCases) {
  std::vector<Case> cases;
  ASSERT_NO_THROW(cases = parse_catalogue());
  EXPECT_GE(cases.size(), 40u);
}

class CatalogueCase : public ::testing::TestWithParam<Case> {};

TEST_P(CatalogueCase, ExitsWithItsCodeAndError) {
  const Case& c = GetParam();
  SCOPED_TRACE("tests/reliability/cases.tsv:" + std::to_string(c.line) + " " + c.id);
  const fs::path dir =
      fs::temp_directory_path() / ("troupe-reliability-" + c.id + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  if (!c.setup.empty()) {
    for (const auto& step : split_steps(c.setup)) {
      ASSERT_NO_THROW(run_setup_step(step, dir)) << step;
    }
  }

  std::vector<std::string> env;
  for (const auto& kv : words(substitute(c.env, dir.string()))) env.push_back(kv);
  TroupeProcess p(words(substitute(c.command, dir.string())), env);
  std::string consumed;  // stdout lines read while waiting for the drive's cue
  if (c.drive.rfind("STDIN:", 0) == 0) {
    p.write_line(unescape(c.drive.substr(6)));
    p.close_stdin();
  } else if (!c.drive.empty()) {
    const bool term = c.drive.rfind("TERM@", 0) == 0;
    const std::string prefix = c.drive.substr(c.drive.find('@') + 1);
    bool seen = false;
    while (!seen) {
      auto line = p.read_line(60s);
      if (!line) break;
      consumed += *line + "\n";
      seen = line->rfind(prefix, 0) == 0;
    }
    ASSERT_TRUE(seen) << "no stdout line starting '" << prefix << "'; stderr: " << p.err();
    p.signal(term ? SIGTERM : SIGINT);
  } else {
    p.close_stdin();
  }
  auto code = p.wait(60s);
  ASSERT_TRUE(code) << "still running after 60 s; stderr: " << p.err();
  EXPECT_EQ(*code, c.exit_code) << "stdout: " << p.out() << "\nstderr: " << p.err();
  const std::string expect = substitute(c.expect, dir.string());
  const std::string stdout_marker = "stdout: ";
  if (expect.rfind(stdout_marker, 0) == 0)
    EXPECT_NE((consumed + p.out()).find(expect.substr(stdout_marker.size())), std::string::npos)
        << "stdout: " << consumed << p.out();
  else
    EXPECT_NE(p.err().find(expect), std::string::npos) << "stderr: " << p.err();
  fs::remove_all(dir);
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CatalogueCase);  // CasesTsv.* reports why
INSTANTIATE_TEST_SUITE_P(Catalogue, CatalogueCase, ::testing::ValuesIn(catalogue_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.id; });

}  // namespace
}  // namespace troupe::reliability
