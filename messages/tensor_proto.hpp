#pragma once
// Tensor <-> TensorProto (messages/proto/tensor.proto), for checkpoints and non-CAF channels.
// No CAF here: code outside the actor layers may use it.

#include <string>
#include <string_view>

#include "core/tensor.hpp"
#include "messages/proto/tensor.pb.h"

namespace troupe {

/// Copies `t` (host memory) into a TensorProto; throws failed_precondition for GPU/undefined
/// tensors.
proto::TensorProto to_proto(const Tensor& t);
/// Builds a Tensor from a proto; throws invalid_argument naming a bad dtype, a negative dimension,
/// an overflowing shape or a content size that does not match the shape.
Tensor from_proto(const proto::TensorProto& p);

/// to_proto(t) serialized to bytes.
std::string serialize_tensor_proto(const Tensor& t);
/// Parses TensorProto bytes; throws data_loss when they are not a TensorProto, else as from_proto.
Tensor parse_tensor_proto(std::string_view bytes);

}  // namespace troupe
