#include "train/gemm_flops.hpp"

#include "core/status.hpp"

namespace troupe {

std::vector<GemmShape> mlp_step_gemms(const std::vector<int64_t>& widths, int64_t rows) {
  if (widths.size() < 2)
    throw invalid_argument("an MLP needs an input and an output width, got " +
                           std::to_string(widths.size()) + " width(s)");
  const size_t layers = widths.size() - 1;
  std::vector<GemmShape> gemms;
  for (size_t l = 0; l < layers; ++l)  // forward: x[rows, in] * w[in, out]
    gemms.push_back({rows, widths[l], widths[l + 1]});
  for (size_t l = layers; l-- > 0;) {
    gemms.push_back({widths[l], rows, widths[l + 1], true, false});  // weight gradient: x^T * dz
    if (l > 0) gemms.push_back({rows, widths[l + 1], widths[l], false, true});  // dz * w^T
  }
  return gemms;
}

double mlp_gemm_flops_per_example(const std::vector<int64_t>& widths) {
  double flops = 0;
  for (const auto& g : mlp_step_gemms(widths, 1)) flops += g.flops();
  return flops;
}

}  // namespace troupe
