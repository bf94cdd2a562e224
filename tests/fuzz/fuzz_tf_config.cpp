// TF_CONFIG and cluster files (core/tf_config, core/cluster_spec): the input is the text. An
// accepted TF_CONFIG must survive to_json() -> parse() unchanged; a cluster file goes through
// ClusterSpec::parse, the reader behind --cluster files.
#include "core/cluster_spec.hpp"
#include "core/status.hpp"
#include "core/tf_config.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  try {
    TfConfig config = TfConfig::parse(text);
    fuzz::require(TfConfig::parse(config.to_json()) == config, "parse(to_json(c)) == c");
  } catch (const Error&) {
  }
  try {
    ClusterSpec::parse(text, "cluster file");
  } catch (const Error&) {
  }
  return 0;
}
