#include "tests/reliability/catalogue.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace troupe::reliability {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(line);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!line.empty() && line.back() == sep) parts.emplace_back();
  return parts;
}

// The data rows of a TSV: no blank lines, no `#` comments, and not the header row (which must
// be `header`). Each row comes with its 1-based line number.
std::vector<std::pair<int, std::vector<std::string>>> rows(const std::string& tsv,
                                                           const std::string& header,
                                                           size_t columns) {
  std::vector<std::pair<int, std::vector<std::string>>> out;
  std::istringstream in(tsv);
  std::string line;
  bool seen_header = false;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    if (!seen_header) {
      if (line != header)
        throw std::runtime_error("line " + std::to_string(number) + ": expected the header '" +
                                 header + "'");
      seen_header = true;
      continue;
    }
    auto cells = split(line, '\t');
    if (cells.size() != columns)
      throw std::runtime_error("line " + std::to_string(number) + ": " +
                               std::to_string(cells.size()) + " columns, expected " +
                               std::to_string(columns));
    for (size_t i = 0; i < cells.size(); ++i)
      if (cells[i].empty())
        throw std::runtime_error("line " + std::to_string(number) + ": column " +
                                 std::to_string(i + 1) + " is empty (write - for none)");
    out.emplace_back(number, std::move(cells));
  }
  if (!seen_header) throw std::runtime_error("no header '" + header + "'");
  return out;
}

// A Markdown table cell: pipes escaped, text in backticks when `code`.
std::string cell(const std::string& text, bool code) {
  std::string escaped;
  for (char c : text) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
  if (!code) return escaped;
  return escaped.find('`') == std::string::npos ? "`" + escaped + "`" : "`` " + escaped + " ``";
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string unescape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    char c = text[++i];
    if (c == 'n') {
      out += '\n';
    } else if (c == 't') {
      out += '\t';
    } else if (c == 'r') {
      out += '\r';
    } else if (c == 'x' && i + 2 < text.size()) {
      out += char(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<Case> parse_cases(const std::string& tsv) {
  std::vector<Case> cases;
  std::map<std::string, int> ids;
  for (auto& [line, c] :
       rows(tsv, "id\tarea\tfault\tsetup\tenv\tcommand\tdrive\texit\texpect", 9)) {
    Case k;
    k.line = line;
    k.id = c[0];
    k.area = c[1];
    k.fault = c[2];
    k.setup = c[3] == "-" ? "" : c[3];
    k.env = c[4] == "-" ? "" : c[4];
    k.command = c[5];
    k.drive = c[6] == "-" ? "" : c[6];
    k.expect = c[8];
    const std::string where = "line " + std::to_string(line) + ": ";
    if (k.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      throw std::runtime_error(where + "id '" + k.id + "' is not [a-z0-9_]+");
    if (!ids.emplace(k.id, line).second)
      throw std::runtime_error(where + "id '" + k.id + "' repeats line " +
                               std::to_string(ids[k.id]));
    if (c[7].empty() || c[7].find_first_not_of("0123456789") != std::string::npos)
      throw std::runtime_error(where + "exit '" + c[7] + "' is not a number");
    k.exit_code = std::stoi(c[7]);
    if (!k.drive.empty() && k.drive.rfind("TERM@", 0) != 0 && k.drive.rfind("INT@", 0) != 0 &&
        k.drive.rfind("STDIN:", 0) != 0)
      throw std::runtime_error(where + "drive '" + k.drive +
                               "' is not -, TERM@PREFIX, INT@PREFIX or STDIN:TEXT");
    cases.push_back(std::move(k));
  }
  return cases;
}

std::vector<ElsewhereTest> parse_elsewhere(const std::string& tsv) {
  std::vector<ElsewhereTest> tests;
  for (auto& [line, c] : rows(tsv, "test\tfile\tfault\tgets", 4))
    tests.push_back({line, c[0], c[1], c[2], c[3]});
  return tests;
}

std::vector<CatalogueFile> bad_experiment_files(const std::string& source_dir) {
  std::vector<CatalogueFile> files;
  const std::string marker = "# expect: ";
  for (const auto& entry : fs::directory_iterator(source_dir + "/tests/experiment/bad")) {
    if (entry.path().extension() != ".yaml") continue;
    std::string line = first_line(read_text(entry.path().string()));
    files.push_back({entry.path().filename().string(),
                     line.rfind(marker, 0) == 0 ? line.substr(marker.size()) : ""});
  }
  std::sort(files.begin(), files.end(),
            [](const CatalogueFile& a, const CatalogueFile& b) { return a.name < b.name; });
  return files;
}

std::vector<CatalogueFile> bad_cluster_files(const std::string& source_dir) {
  std::vector<CatalogueFile> files;
  const fs::path dir = source_dir + "/tests/core/bad_cluster";
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::istringstream expect(read_text((dir / entry.path().stem()).string() + ".expect"));
    std::string field, phrase;
    std::getline(expect, field);
    std::getline(expect, phrase);
    files.push_back({entry.path().filename().string(), field + ": … " + phrase});
  }
  std::sort(files.begin(), files.end(),
            [](const CatalogueFile& a, const CatalogueFile& b) { return a.name < b.name; });
  return files;
}

std::string render_catalogue(const std::vector<Case>& cases,
                             const std::vector<ElsewhereTest>& elsewhere,
                             const std::vector<CatalogueFile>& experiments,
                             const std::vector<CatalogueFile>& clusters) {
  std::ostringstream md;
  const size_t total = cases.size() + elsewhere.size() + experiments.size() + clusters.size();
  md << "**" << total << " bad inputs and faults**, each with a test that checks its error "
     << "text (a test in another suite that feeds several inputs of one kind counts once):\n\n"
     << "| catalogue | checked by | count |\n|---|---|---|\n"
     << "| [the `troupe` binary, case by case](#the-troupe-binary-case-by-case) | "
        "`tests/reliability/cases.tsv`, test_reliability `Catalogue/CatalogueCase.*` | "
     << cases.size() << " |\n"
     << "| [other suites' tests](#other-suites-tests) | `tests/reliability/elsewhere.tsv` (each "
        "test must exist) | "
     << elsewhere.size() << " |\n"
     << "| [bad experiment files](#bad-experiment-files) | `tests/experiment/bad/*.yaml`, "
        "test_experiment `ExperimentCatalogue.*` | "
     << experiments.size() << " |\n"
     << "| [bad cluster files](#bad-cluster-files) | `tests/core/bad_cluster/*.json`, test_core "
        "`Files/BadClusterFile.*` | "
     << clusters.size() << " |\n\n";

  md << "### The troupe binary, case by case\n\n"
     << "Each row runs `troupe` as a process in a fresh directory `{dir}`; what the test writes "
        "or breaks there first (real data from `troupe data synthesize`, real checkpoints from "
        "`troupe run`, then flipped or cut bytes) is the row's setup in "
        "`tests/reliability/cases.tsv`.\n\n"
     << "| # | area | fault | command | exit | error text (stderr unless marked) |\n"
     << "|---|---|---|---|---|---|\n";
  int n = 0;
  for (const auto& c : cases) {
    std::string command = "troupe " + c.command;
    if (!c.env.empty()) command = c.env + " " + command;
    if (c.drive.rfind("TERM@", 0) == 0) command += "  → SIGTERM";
    if (c.drive.rfind("INT@", 0) == 0) command += "  → SIGINT";
    if (c.drive.rfind("STDIN:", 0) == 0) command += " <<< '" + c.drive.substr(6) + "'";
    md << "| " << ++n << " | " << c.area << " | " << cell(c.fault, false) << " | "
       << cell(command, true) << " | " << c.exit_code << " | " << cell(c.expect, true) << " |\n";
  }

  md << "\n### Other suites' tests\n\n"
     << "Faults that need more than one command (a server to talk to, a run to interrupt, a "
        "NaN in the middle of training) are tested where their code is; "
        "`tests/reliability/elsewhere.tsv` names each test and the test fails when one "
        "disappears.\n\n"
     << "| # | fault | what the test asserts | test |\n|---|---|---|---|\n";
  n = 0;
  for (const auto& t : elsewhere)
    md << "| " << ++n << " | " << cell(t.fault, false) << " | " << cell(t.gets, false) << " | "
       << cell(t.test, true) << " in `" << t.file << "` |\n";

  md << "\n### Bad experiment files\n\n"
     << "Each file's first line is the message fragment parsing it must fail with, after "
        "`FILE:LINE:COLUMN: ` (`troupe plan` and `troupe run` print it and exit 1).\n\n"
     << "| # | file | error text |\n|---|---|---|\n";
  n = 0;
  for (const auto& f : experiments)
    md << "| " << ++n << " | `" << f.name << "` | " << cell(f.expect, true) << " |\n";

  md << "\n### Bad cluster files\n\n"
     << "TF_CONFIG files read by `TfConfig::read_file`; the message starts with the file and "
        "the field.\n\n"
     << "| # | file | error text |\n|---|---|---|\n";
  n = 0;
  for (const auto& f : clusters)
    md << "| " << ++n << " | `" << f.name << "` | " << cell(f.expect, true) << " |\n";
  return md.str();
}

}  // namespace troupe::reliability
