// TensorProto bytes (messages/tensor_proto): what checkpoints and non-CAF channels carry. An
// accepted tensor must serialize back to bytes that parse to the same tensor.
#include <google/protobuf/stubs/logging.h>

#include "core/status.hpp"
#include "messages/tensor_proto.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // protobuf logs every invalid UTF-8 string field it parses; the decoder reports the failure.
  google::protobuf::SetLogHandler(
      [](google::protobuf::LogLevel, const char*, int, const std::string&) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    Tensor t = parse_tensor_proto(fuzz::as_text(data, size));
    std::string bytes = serialize_tensor_proto(t);
    fuzz::require(serialize_tensor_proto(parse_tensor_proto(bytes)) == bytes,
                  "parse(serialize(t)) serializes identically");
  } catch (const Error&) {
  }
  return 0;
}
