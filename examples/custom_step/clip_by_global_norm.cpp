#include "clip_by_global_norm.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "coordinator/replica_context.hpp"
#include "core/status.hpp"

namespace {

using troupe::Tensor;

// sqrt of the sum of squares of every element of every tensor (host tensors, float32/64).
double global_norm(const std::vector<Tensor>& tensors) {
  double squares = 0;
  for (const Tensor& t : tensors) {
    if (t.dtype() == troupe::DType::float32) {
      for (float v : t.to_vector<float>()) squares += double(v) * v;
    } else if (t.dtype() == troupe::DType::float64) {
      for (double v : t.to_vector<double>()) squares += v * v;
    } else {
      throw troupe::invalid_argument("clip_by_global_norm: gradients must be float32 or float64");
    }
  }
  return std::sqrt(squares);
}

}  // namespace

troupe::StepFactory clipped_train_step(double clip_norm, ClipStats* stats) {
  return [clip_norm, stats](troupe::Trainer& trainer) -> troupe::StepFn {
    return
        [&trainer, clip_norm, stats](troupe::ReplicaContext& ctx, const std::vector<Tensor>& args) {
          if (args.size() != 3)
            throw troupe::invalid_argument(
                "clipped_train_step takes (features, labels, global_batch), got " +
                std::to_string(args.size()) + " arguments");
          const int replica = ctx.replica_id_in_sync_group();
          const int64_t global_batch = args[2].scalar<int64_t>();

          // Loss and gradients of this replica's rows, scaled by the global batch (so the SUM
          // over replicas is the gradient of the mean loss of the whole batch).
          troupe::Ops ops(*trainer.strategy().kernels());
          troupe::ModelOutput out = trainer.model().compute(
              ops, trainer.replica_parameters(replica), args[0], args[1], global_batch);
          trainer.metrics().record(out.stats);

          std::vector<Tensor> grads;
          for (const auto& g : out.grads) {
            if (g.is_sparse())
              throw troupe::invalid_argument(
                  "clipped_train_step: dense models only (a row gradient cannot be all-reduced)");
            grads.push_back(g.values);
          }
          // The norm must be of the whole batch's gradient, so reduce first: afterwards every
          // replica holds the same summed gradients and computes the same clip factor.
          if (ctx.num_replicas_in_sync() > 1) grads = ctx.all_reduce(troupe::ReduceOp::sum, grads);
          const double norm = global_norm(grads);
          const double scale = norm > clip_norm ? clip_norm / norm : 1.0;
          std::vector<troupe::Gradient> clipped;
          for (const Tensor& g : grads) {
            // A new tensor: the reduced gradient may be shared with the other replicas.
            Tensor scaled = Tensor::zeros(g.dtype(), g.shape());
            ops.scale(g, scale, scaled);
            clipped.push_back({scaled, Tensor()});
          }
          // Already reduced: each replica applies the identical update to its own copy.
          trainer.optimizer().apply_to_replica(replica, clipped);

          if (replica == 0) {
            if (stats->steps.fetch_add(1) == 0) stats->first_norm = norm;
            stats->last_norm = norm;
            if (scale < 1.0) stats->clipped.fetch_add(1);
          }
          return std::vector<Tensor>{Tensor::from_scalar<double>(out.stats.loss_sum),
                                     Tensor::from_scalar<double>(double(out.stats.correct)),
                                     Tensor::from_scalar<double>(double(out.stats.rows))};
        };
  };
}
