#include "messages/tensor_proto.hpp"

#include <cstring>
#include <limits>

namespace troupe {

proto::TensorProto to_proto(const Tensor& t) {
  if (!t.defined()) throw failed_precondition("to_proto: undefined tensor");
  if (t.memory() != MemoryKind::host)
    throw failed_precondition("to_proto: tensor " + t.description() +
                              " is in GPU memory; copy it to the host first");
  proto::TensorProto p;
  p.set_dtype(static_cast<proto::DataType>(static_cast<int>(t.dtype())));
  for (int64_t d : t.shape().dims()) p.mutable_shape()->add_dim(d);
  p.set_tensor_content(static_cast<const char*>(t.raw_data()), t.byte_size());
  return p;
}

Tensor from_proto(const proto::TensorProto& p) {
  int raw = static_cast<int>(p.dtype());
  if (!is_valid_dtype(raw))
    throw invalid_argument("TensorProto: dtype value " + std::to_string(raw) + " is not a DType");
  DType dtype = static_cast<DType>(raw);
  std::vector<int64_t> dims(p.shape().dim().begin(), p.shape().dim().end());
  uint64_t expected = dtype_size(dtype);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0)
      throw invalid_argument("TensorProto: dimension " + std::to_string(i) + " is negative (" +
                             std::to_string(dims[i]) + ")");
    uint64_t d = uint64_t(dims[i]);
    if (d != 0 && expected > uint64_t(std::numeric_limits<int64_t>::max()) / d)
      throw invalid_argument("TensorProto: shape overflows at dimension " + std::to_string(i));
    expected *= d;
  }
  if (p.tensor_content().size() != expected)
    throw invalid_argument("TensorProto: tensor_content has " +
                           std::to_string(p.tensor_content().size()) + " bytes but " +
                           std::string(dtype_name(dtype)) + " shape needs " +
                           std::to_string(expected));
  Tensor t(dtype, Shape(std::move(dims)));
  if (expected) std::memcpy(t.raw_data(), p.tensor_content().data(), expected);
  return t;
}

std::string serialize_tensor_proto(const Tensor& t) { return to_proto(t).SerializeAsString(); }

Tensor parse_tensor_proto(std::string_view bytes) {
  proto::TensorProto p;
  if (!p.ParseFromArray(bytes.data(), int(bytes.size())))
    throw data_loss("TensorProto: " + std::to_string(bytes.size()) +
                    " bytes do not parse as a TensorProto");
  return from_proto(p);
}

}  // namespace troupe
