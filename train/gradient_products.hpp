#pragma once
// Dense kernel gradients handed to the all-reduce as their factors (Gradient::lhs, rhs) instead
// of values. Where the replicas of one process sum in shared memory, the all-reduce computes row
// blocks of sum_r lhs_r^T rhs_r, each block one GEMM per replica accumulated in place, claimed
// by whichever replica is free (core/collective/shared_memory_all_reduce.hpp). No replica forms
// its own product, no separate pass reads two of them to sum, and the faster core takes more of
// the blocks. The bits are those of the values path: a product goes this way only where the
// GEMM's blocks reproduce each replica's whole product summed in replica order
// (cpu_outer_product_rows_exact, probed once per shape).

#include <string>
#include <vector>

#include "coordinator/replica_context.hpp"
#include "coordinator/strategy.hpp"
#include "train/model.hpp"

namespace troupe {

/// Whether a replica of `strategy` on `device` should ask its model for
/// GradientForm::kernel_products: the gradients are all-reduced (not merged) among more than one
/// replica of this one process, on the CPU, in float32 with a known GEMM library, and every
/// replica has the same rows (`rows` x replicas == `global_batch`), so every replica decides alike.
bool wants_kernel_products(const Strategy& strategy, bool all_reduce_path,
                           const std::string& device, DType dtype, int64_t rows,
                           int64_t global_batch);

/// Replaces each product in `grads` by its values (one GEMM each, through `ops`).
void form_products(const Ops& ops, std::vector<Gradient>& grads);

/// In replica context: the SUM all-reduce of dense `grads`, products included, one result per
/// gradient in order. Products that `strategy`'s GEMM sums exactly in blocks go to the
/// all-reduce as products; the others are formed first.
std::vector<Tensor> all_reduce_gradients(ReplicaContext& ctx, const Strategy& strategy,
                                         const Ops& ops, const std::vector<Gradient>& grads);

}  // namespace troupe
