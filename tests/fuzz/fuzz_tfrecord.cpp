// TFRecord framing (core/data/tfrecord): the input is a whole file. Every record is read; a
// corrupt or truncated file must end in data_loss naming the offset, never in a crash or an
// allocation the file cannot back.
#include "core/data/tfrecord.hpp"
#include "core/status.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = fuzz::write_scratch_file("input.tfrecord", fuzz::as_text(data, size));
  try {
    data::TFRecordReader reader(path);
    uint64_t last = 0;
    while (auto record = reader.next()) {
      fuzz::require(reader.offset() == last + 16 + record->size(), "offset advances by a frame");
      last = reader.offset();
    }
    // Resuming at a record boundary (what iterator state does) reads the same tail again.
    reader.seek(0);
    while (reader.next()) {
    }
  } catch (const Error&) {
  }
  return 0;
}
