// `troupe bench train`: examples/s of an MLP 784-256-10 (global batch 256, SGD) on 1 and 2 CPU
// replicas of MirroredStrategy, against a limit measured in the same run: single-thread OpenBLAS
// sgemm GFLOP/s on the step's own GEMM shapes divided by the model's FLOPs per example
// (fwd + bwd = 3 x 2 x (784*256 + 256*10)). The N-core limit is N x the single-thread limit.
#include <chrono>
#include <cstdio>

#include "bench/bench_table.hpp"
#include "bench/command_line.hpp"
#include "coordinator/mirrored_strategy.hpp"
#include "coordinator/model/trainer.hpp"
#include "coordinator/runtime.hpp"
#include "core/data/synthetic.hpp"

namespace po = boost::program_options;

namespace troupe {
namespace {

constexpr int64_t kInput = 784, kHidden = 256, kClasses = 10, kGlobalBatch = 256;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double flops_per_example() { return 3.0 * 2.0 * double(kInput * kHidden + kHidden * kClasses); }

// The six GEMMs of one step per layer (forward, weight gradient, input gradient) at batch
// `rows`, best of `reps` rounds, single-threaded BLAS (the CPU registry pins it to one thread).
double measure_sgemm_gflops(const Ops& ops, int64_t rows, int reps) {
  struct Layer {
    Tensor x, w, z, dw, dx;
  };
  std::vector<Layer> layers;
  double flops = 0;
  for (auto [in, out] : {std::pair<int64_t, int64_t>{kInput, kHidden}, {kHidden, kClasses}}) {
    layers.push_back({Tensor::random_normal({rows, in}, 1), Tensor::random_normal({in, out}, 2),
                      Tensor(DType::float32, {rows, out}), Tensor(DType::float32, {in, out}),
                      Tensor(DType::float32, {rows, in})});
    flops += 3 * 2.0 * double(rows * in * out);
  }
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (auto& l : layers) {
      ops.matmul(l.x, l.w, l.z);                // forward
      ops.matmul(l.x, l.z, l.dw, true, false);  // weight gradient
      ops.matmul(l.z, l.w, l.dx, false, true);  // input gradient
    }
    best = std::max(best, flops / seconds_since(start) / 1e9);
  }
  return best;
}

struct Batches {
  std::vector<Tensor> features, labels;
};

// Materialised ahead of time: the benchmark times the training step, not the input pipeline.
Batches make_batches(int count) {
  data::ClassificationOptions d;
  d.num_examples = count * kGlobalBatch;
  d.num_features = kInput;
  d.num_classes = kClasses;
  d.seed = 1;
  Batches b;
  auto it = data::synthetic_classification(d).batch(kGlobalBatch, true).make_iterator();
  while (auto e = it.next()) {
    b.features.push_back(e->at(0));
    b.labels.push_back(e->at(1));
  }
  return b;
}

struct TrainResult {
  int replicas;
  ApplyPath path;
  double examples_per_s;
};

TrainResult measure_training(Runtime& runtime, int replicas, ApplyPath path, const Batches& data,
                             int warmup, int steps) {
  std::vector<std::string> devices;
  for (int i = 0; i < replicas; ++i) devices.push_back("CPU:" + std::to_string(i));
  MirroredStrategy strategy(runtime.system(), devices);
  auto scope = strategy.scope();
  ModelConfig c;
  c.input_dim = kInput;
  c.hidden = {kHidden};
  c.classes = kClasses;
  Trainer trainer(strategy, make_mlp(c), {OptimizerKind::sgd, 0.01}, path);
  // Per-replica batches are row slices of the global batch (views, not copies).
  std::vector<PerReplica> x, y;
  for (size_t i = 0; i < data.features.size(); ++i) {
    x.push_back(trainer.split_batch(data.features[i]));
    y.push_back(trainer.split_batch(data.labels[i]));
  }
  for (int s = 0; s < warmup; ++s) trainer.train_step(x[s % x.size()], y[s % y.size()]);
  auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) trainer.train_step(x[s % x.size()], y[s % y.size()]);
  return {replicas, path, double(steps * kGlobalBatch) / seconds_since(start)};
}

const char* path_name(ApplyPath p) { return p == ApplyPath::all_reduce ? "all_reduce" : "merge_call"; }

}  // namespace

int run_train_bench(const std::vector<std::string>& args) {
  po::options_description options("troupe bench train options");
  bool json = false;
  int steps = 40, warmup = 5;
  options.add_options()
      ("json", po::bool_switch(&json), "print one JSON object instead of a table")
      ("steps", po::value(&steps)->default_value(40), "timed steps per configuration")
      ("warmup", po::value(&warmup)->default_value(5), "untimed steps first");
  po::variables_map vm;
  if (!parse_command_line("troupe bench train [--json] [--steps N]", args, options, vm)) return 0;
  if (steps < 1) throw po::error("--steps must be >= 1, got " + std::to_string(steps));
  if (warmup < 0) throw po::error("--warmup must be >= 0, got " + std::to_string(warmup));

  auto kernels = default_kernels();
  Ops ops(*kernels);
  const Batches data = make_batches(8);
  Runtime runtime;
  std::vector<TrainResult> results;
  for (int replicas : {1, 2})
    results.push_back(
        measure_training(runtime, replicas, ApplyPath::all_reduce, data, warmup, steps));
  std::vector<TrainResult> merge;
  if (!json)
    merge.push_back(measure_training(runtime, 2, ApplyPath::merge_call, data, warmup, steps));
  // The limit is measured after training too; the better figure wins, so a noisy neighbour
  // during one measurement does not flatter the ratios.
  double sgemm = std::max(measure_sgemm_gflops(ops, kGlobalBatch, 5),
                          measure_sgemm_gflops(ops, kGlobalBatch / 2, 5));
  const double limit = sgemm * 1e9 / flops_per_example();
  if (json) {
    std::printf("{\"limits\":{\"sgemm_gflops\":%.3f,\"examples_per_s_limit\":%.1f},\"results\":[",
                sgemm, limit);
    for (size_t i = 0; i < results.size(); ++i)
      std::printf("%s{\"replicas\":%d,\"examples_per_s\":%.1f,\"ratio_to_limit\":%.3f}",
                  i ? "," : "", results[i].replicas, results[i].examples_per_s,
                  results[i].examples_per_s / (limit * results[i].replicas));
    std::printf("]}\n");
    return 0;
  }
  std::printf("sgemm, single thread, step shapes   %9.3f GFLOP/s\n", sgemm);
  std::printf("limit, 1 core                       %9.1f examples/s\n", limit);
  std::printf("limit, 2 cores (2 x 1 core)         %9.1f examples/s\n", 2 * limit);
  std::printf("%-9s %-11s %14s %16s\n", "replicas", "path", "examples/s", "ratio_to_limit");
  results.insert(results.end(), merge.begin(), merge.end());
  for (auto& r : results)
    std::printf("%-9d %-11s %14.1f %16.3f\n", r.replicas, path_name(r.path), r.examples_per_s,
                r.examples_per_s / (limit * r.replicas));
  std::printf("speed-up 2 vs 1 replica (all_reduce): %.2fx\n",
              results[1].examples_per_s / results[0].examples_per_s);
  return 0;
}

}  // namespace troupe
