#include "train/gradient_products.hpp"

#include "core/device_spec.hpp"
#include "kernels/cpu_gemm.hpp"

namespace troupe {

bool wants_kernel_products(const Strategy& strategy, bool all_reduce_path,
                           const std::string& device, DType dtype, int64_t rows,
                           int64_t global_batch) {
  const int replicas = strategy.num_local_replicas();
  return all_reduce_path && replicas > 1 && strategy.num_workers() == 1 &&
         dtype == DType::float32 && rows > 0 && rows * replicas == global_batch &&
         gpu_ordinal(device) < 0 && strategy.kernels()->cpu_float32_gemm().has_value();
}

namespace {

// A product's values, one GEMM through `ops`; a gradient of values as it is.
Tensor values_of(const Ops& ops, const Gradient& g) {
  if (!g.is_product()) return g.values;
  Tensor values(DType::float32, Shape{g.lhs.shape()[1], g.rhs.shape()[1]});
  ops.matmul(g.lhs, g.rhs, values, /*transpose_a=*/true);
  return values;
}

}  // namespace

void form_products(const Ops& ops, std::vector<Gradient>& grads) {
  for (auto& g : grads) {
    if (!g.is_product()) continue;
    g.values = values_of(ops, g);
    g.lhs = g.rhs = Tensor();
  }
}

std::vector<Tensor> all_reduce_gradients(ReplicaContext& ctx, const Strategy& strategy,
                                         const Ops& ops, const std::vector<Gradient>& grads) {
  const auto gemm = strategy.kernels()->cpu_float32_gemm();
  std::vector<Tensor> values;
  std::vector<OuterProduct> products;
  std::vector<int64_t> slot;  // per gradient: index into values, or -1 - index into products
  for (const auto& g : grads) {
    if (g.is_product() && gemm) {
      const int64_t k = g.lhs.shape()[0], m = g.lhs.shape()[1], n = g.rhs.shape()[1];
      if (cpu_outer_product_rows_exact(*gemm, m, n, k, ctx.num_replicas_in_sync())) {
        slot.push_back(-1 - int64_t(products.size()));
        products.push_back({g.lhs, g.rhs, cpu_outer_product_rows(*gemm)});
        continue;
      }
    }
    slot.push_back(int64_t(values.size()));
    values.push_back(values_of(ops, g));
  }
  std::vector<Tensor> reduced = products.empty() ? ctx.all_reduce(ReduceOp::sum, values)
                                                 : ctx.all_reduce_with_products(values, products);
  std::vector<Tensor> out;
  out.reserve(grads.size());
  for (int64_t s : slot)
    out.push_back(s >= 0 ? reduced.at(size_t(s)) : reduced.at(values.size() + size_t(-1 - s)));
  return out;
}

}  // namespace troupe
