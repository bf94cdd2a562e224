// Experiment files (experiment/experiment_file): the input is the YAML text `troupe plan` and
// `troupe run` read. Anything but a troupe::Error naming the file (a yaml-cpp exception, a crash,
// a hang) is a finding.
#include "core/status.hpp"
#include "experiment/experiment_file.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    experiment::parse_experiment(fuzz::as_text(data, size), "fuzz.yaml");
  } catch (const Error& e) {
    fuzz::require(std::string(e.what()).find("fuzz.yaml") != std::string::npos,
                  "the error names the file");
  }
  return 0;
}
