#include "core/reduce_op.hpp"

#include <cctype>
#include <string>

#include "core/status.hpp"

namespace troupe {

std::string_view reduce_op_name(ReduceOp op) { return op == ReduceOp::sum ? "SUM" : "MEAN"; }

ReduceOp parse_reduce_op(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "SUM") return ReduceOp::sum;
  if (upper == "MEAN") return ReduceOp::mean;
  throw invalid_argument("reduce_op must be SUM or MEAN, got '" + std::string(text) + "'");
}

}  // namespace troupe
