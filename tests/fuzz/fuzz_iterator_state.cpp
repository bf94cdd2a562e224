// Iterator state (core/data/iterator_state, Iterator::restore): the bytes a checkpoint's blob
// hands back to the input pipeline. Byte 0 picks a pipeline and whether the rest is the sealed
// state as stored (magic, length, CRC32C) or a payload the harness seals, so the fuzzer also
// reaches every stage's field reader past the checksum. After a restore the iterator must run.
#include "core/data/dataset.hpp"
#include "core/data/iterator_state.hpp"
#include "core/status.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/iterator_pipelines.hpp"

using namespace troupe;
using namespace troupe::data;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Dataset dataset = fuzz::iterator_pipeline(data[0] % fuzz::kIteratorPipelines);
  std::string_view rest = fuzz::as_text(data + 1, size - 1);
  std::string state = (data[0] & 0x80) ? seal_state(std::string(rest)) : std::string(rest);
  try {
    Iterator it = dataset.make_iterator();
    it.restore(state);
    for (int i = 0; i < 64 && it.next(); ++i) {
    }
  } catch (const Error&) {
  }
  return 0;
}
