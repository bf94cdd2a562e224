// tf.train.Example wire format (core/data/example_proto): the input is one record. Both the
// zero-copy reader (for_each_feature and the FeatureView decoders the input pipeline uses) and
// decode_example run; anything they accept must re-encode to the same Example.
#include <vector>

#include "core/data/example_proto.hpp"
#include "core/status.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;
using namespace troupe::data;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view record = fuzz::as_text(data, size);
  try {
    for_each_feature(record, [](std::string_view, const FeatureView& feature) {
      size_t n = feature.size();
      switch (feature.kind) {
        case FeatureKind::float_list: {
          std::vector<float> out(n);
          feature.copy_floats(out.data());
          break;
        }
        case FeatureKind::int64_list: {
          std::vector<int64_t> out(n);
          feature.copy_int64s(out.data());
          break;
        }
        case FeatureKind::bytes_list:
          fuzz::require(feature.bytes().size() == n, "bytes() yields size() values");
          break;
        case FeatureKind::none: break;
      }
    });
  } catch (const Error&) {
  }
  try {
    Example example = decode_example(record);
    std::string encoded = encode_example(example);
    fuzz::require(encode_example(decode_example(encoded)) == encoded,
                  "decode(encode(x)) re-encodes identically");
  } catch (const Error&) {
  }
  return 0;
}
