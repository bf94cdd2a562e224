#pragma once
// The catalogue of bad inputs and faults (tests/reliability/cases.tsv): each row is a `troupe`
// command run as a real process against real files in a fresh directory, with the exit code and
// the error text it must produce. docs/reliability.md is rendered from the same rows, and from
// the other suites' catalogues (bad experiment files, bad cluster files, other named tests), so
// the document cannot drift from what is tested.

#include <ostream>
#include <string>
#include <vector>

namespace troupe::reliability {

/// One row of cases.tsv.
struct Case {
  int line = 0;         ///< in cases.tsv, for error messages
  std::string id;       ///< unique, [a-z0-9_]+ (the test's name)
  std::string area;     ///< what kind of input: cli, secret, experiment, data, checkpoint, ...
  std::string fault;    ///< what is wrong, in words
  std::string setup;    ///< steps run first, " ; "-separated (see run_setup_step)
  std::string env;      ///< space-separated K=V (K= removes K), or "-"
  std::string command;  ///< arguments after `troupe`, space-separated ('' is an empty one)
  std::string drive;    ///< "" (stdin closed at once), "TERM@PREFIX" / "INT@PREFIX" (that
                        ///< signal after a stdout line starting with PREFIX) or "STDIN:TEXT"
                        ///< (TEXT, C escapes decoded, written to stdin, then closed)
  int exit_code = 0;    ///< expected exit status (128 + signal when killed by one)
  std::string expect;   ///< fragment of stderr ("stdout: ..." for stdout); {dir} = case dir
};

/// Test names print a case as its id (not as bytes).
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.id; }

/// Parses cases.tsv text; throws std::runtime_error naming the line of a malformed row (wrong
/// column count, bad exit code, duplicate or malformed id).
std::vector<Case> parse_cases(const std::string& tsv);

/// One test of another suite that checks a fault's error text (tests/reliability/elsewhere.tsv).
struct ElsewhereTest {
  int line = 0;
  std::string test;   ///< "Suite.Name"
  std::string file;   ///< source file relative to the repository
  std::string fault;  ///< what is wrong, in words
  std::string gets;   ///< what the test asserts: exit code and message fragment
};

/// Parses elsewhere.tsv text (test, file, fault, gets); throws naming a malformed line.
std::vector<ElsewhereTest> parse_elsewhere(const std::string& tsv);

/// One file of a directory-driven catalogue (bad experiment YAML, bad cluster JSON).
struct CatalogueFile {
  std::string name;    ///< file name
  std::string expect;  ///< the message fragment its test requires
};

/// tests/experiment/bad/*.yaml with their `# expect:` lines, sorted by name.
std::vector<CatalogueFile> bad_experiment_files(const std::string& source_dir);
/// tests/core/bad_cluster/*.json with "<field>: ... <phrase>" from their .expect files.
std::vector<CatalogueFile> bad_cluster_files(const std::string& source_dir);

/// The generated part of docs/reliability.md (between its markers), from all of the above.
std::string render_catalogue(const std::vector<Case>& cases,
                             const std::vector<ElsewhereTest>& elsewhere,
                             const std::vector<CatalogueFile>& experiments,
                             const std::vector<CatalogueFile>& clusters);

/// Whole-file read; throws naming the path when it cannot be read.
std::string read_text(const std::string& path);

/// `text` with C escapes \n \r \t \\ \xHH decoded.
std::string unescape(const std::string& text);

}  // namespace troupe::reliability
