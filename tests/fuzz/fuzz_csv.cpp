// CSV files (core/data/csv_dataset): byte 0 picks the options (column count and types, header,
// delimiter), the rest is the file. Rows are read through the real Dataset iterator, and the
// iterator's saved position is restored into a fresh one (the resume path re-reads the file).
#include "core/data/file_sources.hpp"
#include "core/status.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;
using namespace troupe::data;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t knobs = data[0];
  static const DType kTypes[] = {DType::float32, DType::float64, DType::int32, DType::int64};
  CsvOptions options;
  size_t columns = 1 + (knobs & 3);
  for (size_t c = 0; c < columns; ++c)
    options.column_types.push_back(kTypes[(knobs >> (2 + c)) & 3]);
  options.header = knobs & 0x40;
  options.delimiter = (knobs & 0x80) ? ';' : ',';
  std::string path = fuzz::write_scratch_file("input.csv", fuzz::as_text(data + 1, size - 1));
  try {
    Dataset dataset = csv_dataset({path}, options);
    Iterator it = dataset.make_iterator();
    size_t rows = 0;
    std::string saved;
    while (it.next()) {
      if (++rows == 2) saved = it.save();
    }
    if (!saved.empty()) {
      Iterator resumed = dataset.make_iterator();
      resumed.restore(saved);
      while (resumed.next()) {
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
