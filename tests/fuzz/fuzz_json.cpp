// The strict JSON reader (core/json) behind TF_CONFIG and cluster files: the input is the text.
// Whatever it accepts must print back to text that parses to an equal value.
#include "core/json.hpp"
#include "core/status.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    Json value = Json::parse(fuzz::as_text(data, size));
    std::string text = value.dump();
    Json again = Json::parse(text);
    fuzz::require(again == value, "parse(dump(v)) == v");
    fuzz::require(again.dump() == text, "dump is stable");
  } catch (const Error&) {
  }
  return 0;
}
