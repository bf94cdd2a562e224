// `troupe bench train`: examples/s of an MLP 784-256-10 (global batch 256, SGD) on 1 and 2 CPU
// replicas of MirroredStrategy, against a limit measured in the same run: the GEMM FLOPs the step
// executes per example (train/gemm_flops: forward and weight gradients of both layers, the input
// gradient of the second only) at the best single-thread sgemm rate measured on exactly those
// GEMM shapes and transposes, at the batch each replica runs, over every GEMM library the build
// has (OpenBLAS, oneDNN; both reported). Each rate is timed over as many steps' GEMMs as one
// training sample runs (--steps), once per round like the training, best round of each: on a VM
// whose speed changes within milliseconds, the best of sub-millisecond GEMM samples would catch
// bursts no 20-step sample can sustain. The N-core limit is N x the single-thread limit; a ratio
// above 1 would mean a wrong count.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "bench/bench_table.hpp"
#include "bench/fma_peak.hpp"
#include "bench/train_workers.hpp"
#include "cli/command_line.hpp"
#include "coordinator/mirrored_strategy.hpp"
#include "coordinator/runtime.hpp"
#include "core/data/synthetic.hpp"
#include "core/float_mode.hpp"
#include "kernels/cpu_gemm.hpp"
#include "train/gemm_flops.hpp"
#include "train/trainer.hpp"

namespace po = boost::program_options;

namespace troupe {
namespace {

constexpr int64_t kInput = 784, kHidden = 256, kClasses = 10, kGlobalBatch = 256;
// troupe run's default for train.steps_per_execution (coordinator/experiment).
constexpr int kStepsPerExecution = 8;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const std::vector<int64_t> kWidths{kInput, kHidden, kClasses};

double flops_per_example() { return mlp_gemm_flops_per_example(kWidths); }

// GFLOP/s of `gemms` run one after another (with their transposes) `repeat` times, best of
// `reps` rounds, single-threaded (the CPU registry keeps every GEMM library on one thread).
double measure_gemms_gflops(const Ops& ops, const std::vector<GemmShape>& gemms, int reps,
                            int repeat = 1) {
  struct Product {
    Tensor a, b, c;
    bool transpose_a, transpose_b;
  };
  std::vector<Product> products;
  double flops = 0;
  for (const auto& g : gemms) {
    Shape a = g.transpose_a ? Shape{g.inner, g.rows} : Shape{g.rows, g.inner};
    Shape b = g.transpose_b ? Shape{g.cols, g.inner} : Shape{g.inner, g.cols};
    products.push_back({Tensor::random_normal(a, 1), Tensor::random_normal(b, 2),
                        Tensor(DType::float32, {g.rows, g.cols}), g.transpose_a, g.transpose_b});
    flops += g.flops();
  }
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < repeat; ++k)
      for (auto& p : products) ops.matmul(p.a, p.b, p.c, p.transpose_a, p.transpose_b);
    best = std::max(best, repeat * flops / seconds_since(start) / 1e9);
  }
  return best;
}

// The GEMMs one step executes at batch `rows` (mlp_step_gemms), `steps` steps' worth per sample.
double measure_sgemm_gflops(const Ops& ops, int64_t rows, int reps, int steps = 1) {
  return measure_gemms_gflops(ops, mlp_step_gemms(kWidths, rows), reps, steps);
}

// sgemm GFLOP/s of `threads` threads each running the single-thread measurement at once: all
// together, what this machine really gives to parallel work right now, and the slowest thread's
// share (synchronous replicas all wait for the slowest core: on a VM one vCPU can run well
// below the other for many steps).
struct ParallelRate {
  double total = 0, slowest = 0;
};
ParallelRate measure_parallel_sgemm_gflops(const Ops& ops, int threads, int steps) {
  std::vector<double> rates(size_t(threads), 0.0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      set_flush_denormals(true);  // as the replicas of the run it is the limit of
      rates[size_t(t)] = measure_sgemm_gflops(ops, kGlobalBatch / 2, 1, steps);
    });
  for (auto& th : pool) th.join();
  ParallelRate rate{0, *std::min_element(rates.begin(), rates.end())};
  for (double r : rates) rate.total += r;
  return rate;
}

// Rates of one GEMM library on the step's GEMMs, best over the run's rounds: one thread at the
// batch of 1 replica (the global batch) and of each of 2 replicas (half of it), and 2 threads at
// once at half of it (what the 2 cores give together: on this VM often less than twice one,
// since a vCPU's speed depends on what the other runs).
struct GemmRates {
  CpuGemm gemm;
  KernelRegistry registry;
  double gflops_full = 0, gflops_half = 0;
  ParallelRate pair;
  void measure(int reps, int steps, bool with_pair) {
    Ops ops(registry);
    gflops_full = std::max(gflops_full, measure_sgemm_gflops(ops, kGlobalBatch, reps, steps));
    gflops_half = std::max(gflops_half, measure_sgemm_gflops(ops, kGlobalBatch / 2, reps, steps));
    if (!with_pair) return;
    const ParallelRate now = measure_parallel_sgemm_gflops(ops, 2, steps);
    if (now.total > pair.total) pair = now;
  }
};

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
  int per_execution;
  double examples_per_s;
};

// One configuration kept alive across rounds, so rounds of different configurations interleave
// and a burst of load from a neighbour hits all of them alike.
class TrainingRun {
 public:
  TrainingRun(Runtime& runtime, int replicas, ApplyPath path, int per_execution,
              const Batches& data)
      : replicas_(replicas),
        path_(path),
        per_execution_(per_execution),
        strategy_(runtime.system(), cpu_devices(replicas), ring_options()) {
    // Scopes are per thread and do not nest across strategies: enter it only while in use.
    auto scope = strategy_.scope();
    trainer_ = std::make_unique<Trainer>(strategy_, make_mlp(mlp_config()),
                                         OptimizerConfig{OptimizerKind::sgd, 0.01}, path);
    // Per-replica batches are row slices of the global batch (views, not copies).
    for (size_t i = 0; i < data.features.size(); ++i) {
      x_.push_back(trainer_->split_batch(data.features[i]));
      y_.push_back(trainer_->split_batch(data.labels[i]));
    }
  }
  int replicas() const { return replicas_; }
  int per_execution() const { return per_execution_; }
  static ModelConfig mlp_config() {
    ModelConfig c;
    c.input_dim = kInput;
    c.hidden = {kHidden};
    c.classes = kClasses;
    return c;
  }
  /// The path the trainer takes (automatic resolved against the strategy).
  ApplyPath path() { return resolve_apply_path(path_, strategy_); }

  /// Runs `steps` steps, per_execution() of them per strategy.run; returns examples/s.
  double run(int steps) {
    auto scope = strategy_.scope();
    auto start = std::chrono::steady_clock::now();
    for (int done = 0; done < steps;) {
      std::vector<ValueArg> x, y;
      for (int k = 0; k < per_execution_ && done < steps; ++k, ++done, ++next_) {
        x.push_back(x_[next_ % x_.size()]);
        y.push_back(y_[next_ % y_.size()]);
      }
      trainer_->train_steps(x, y);
    }
    return double(steps * kGlobalBatch) / seconds_since(start);
  }

 private:
  static std::vector<std::string> cpu_devices(int n) {
    std::vector<std::string> devices;
    for (int i = 0; i < n; ++i) devices.push_back("CPU:" + std::to_string(i));
    return devices;
  }
  // The cross-device op `troupe run` uses by default (experiment files default to ring), so the
  // benchmark measures what a user's MLP run does.
  static MirroredOptions ring_options() {
    MirroredOptions o;
    o.cross_device_ops = CrossDeviceOpKind::collective_all_reduce;
    return o;
  }

  int replicas_;
  ApplyPath path_;
  int per_execution_;
  MirroredStrategy strategy_;
  std::unique_ptr<Trainer> trainer_;
  std::vector<PerReplica> x_, y_;
  size_t next_ = 0;
};

// The ceiling for the runtime: `threads` threads, each training its own copy of the model on
// its slice of every global batch (compute + SGD), never synchronising. Examples/s of all.
double measure_unsynchronised(const Ops& ops, int threads, const Batches& data, int steps) {
  auto model = make_mlp(TrainingRun::mlp_config());
  std::vector<double> seconds(size_t(threads), 0.0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      set_flush_denormals(true);  // as the replicas of the run it is the ceiling of
      std::vector<Tensor> params;
      for (auto& p : model->initial_parameters()) params.push_back(p.value.clone());
      const int64_t rows = kGlobalBatch / threads;
      auto slice = [&](const Tensor& global, int s) {
        return global.slice_rows(t * rows, (t + 1) * rows);
      };
      auto step = [&](int s) {
        size_t i = size_t(s) % data.features.size();
        auto out = model->compute(ops, params, slice(data.features[i], s), slice(data.labels[i], s),
                                  kGlobalBatch);
        for (size_t p = 0; p < params.size(); ++p)
          ops.apply_sgd(params[p], out.grads[p].values, {0.01});
      };
      for (int s = 0; s < 5; ++s) step(s);
      auto start = std::chrono::steady_clock::now();
      for (int s = 0; s < steps; ++s) step(s);
      seconds[size_t(t)] = seconds_since(start);
    });
  for (auto& th : pool) th.join();
  return double(steps * kGlobalBatch) / *std::max_element(seconds.begin(), seconds.end());
}

const char* path_name(ApplyPath p) {
  return p == ApplyPath::all_reduce ? "all_reduce" : "merge_call";
}

}  // namespace

int run_train_bench(const std::vector<std::string>& args) {
  po::options_description options("troupe bench train options");
  bool json = false;
  int steps = 20, warmup = 5, rounds = 5, per_execution = kStepsPerExecution, workers = 0;
  options.add_options()("workers", po::value(&workers)->default_value(0),
                        "instead: W processes x 1 replica (troupe launch) against 1 process x W "
                        "replicas (troupe run), --steps (default then 200) steps each")(
      "json", po::bool_switch(&json), "print one JSON object instead of a table")(
      "steps", po::value(&steps)->default_value(20), "timed steps per round and configuration")(
      "rounds", po::value(&rounds)->default_value(5), "interleaved rounds; the best is reported")(
      "warmup", po::value(&warmup)->default_value(5), "untimed steps first")(
      "steps-per-execution", po::value(&per_execution)->default_value(kStepsPerExecution),
      "training steps per strategy.run (experiment key train.steps_per_execution); the table "
      "adds 1 for comparison");
  po::variables_map vm;
  if (!parse_command_line("troupe bench train [--json] [--steps N] [--rounds N]", args, options,
                          vm))
    return 0;
  if (steps < 1) throw po::error("--steps must be >= 1, got " + std::to_string(steps));
  if (rounds < 1) throw po::error("--rounds must be >= 1, got " + std::to_string(rounds));
  if (warmup < 0) throw po::error("--warmup must be >= 0, got " + std::to_string(warmup));
  if (per_execution < 1)
    throw po::error("--steps-per-execution must be >= 1, got " + std::to_string(per_execution));
  if (workers == 1 || workers < 0)
    throw po::error("--workers must be 0 or >= 2, got " + std::to_string(workers));
  // The single-thread limits run here; the replicas and the other threads set the same mode as
  // `troupe run`'s default (train.flush_denormals: true).
  ScopedFlushDenormals flush(true);
  // Whole runs start processes: 200 steps unless --steps says otherwise.
  if (workers > 0)
    return run_train_workers_comparison(workers, vm["steps"].defaulted() ? 200 : steps, rounds,
                                        json);

  auto kernels = default_kernels();
  Ops ops(*kernels);
  std::vector<GemmRates> gemms;
  for (CpuGemm g : available_cpu_gemms()) gemms.push_back({g, make_cpu_registry(g), 0, 0, {}});
  const Batches data = make_batches(8);
  Runtime runtime(ActorSystemOptions::for_replica_training());
  std::vector<std::unique_ptr<TrainingRun>> runs;
  // What troupe run does by default first (1 and 2 replicas, what --json reports), then the
  // other path, then one step per strategy.run.
  auto add = [&](int replicas, ApplyPath path, int k) {
    runs.push_back(std::make_unique<TrainingRun>(runtime, replicas, path, k, data));
  };
  add(1, ApplyPath::automatic, per_execution);
  add(2, ApplyPath::automatic, per_execution);
  add(2, ApplyPath::merge_call, per_execution);
  if (per_execution != 1) {
    add(1, ApplyPath::automatic, 1);
    add(2, ApplyPath::automatic, 1);
  }
  for (auto& r : runs) r->run(warmup);
  for (auto& g : gemms) g.measure(1, 1, false);  // warm-up: oneDNN generates its kernels
  // Best of `rounds` interleaved rounds, GEMM rates included: the machine is shared, so the best
  // round is the one least disturbed by others, for the training and its limit alike.
  std::vector<double> best(runs.size(), 0.0);
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < runs.size(); ++i) best[i] = std::max(best[i], runs[i]->run(steps));
    for (auto& g : gemms) g.measure(1, steps, true);  // as long as a training sample's GEMMs
  }
  // The best library at each replica's batch: the limit no library choice could beat.
  double best_full = 0, best_half = 0;
  ParallelRate parallel;
  const char* parallel_library = "";
  for (auto& g : gemms) {
    best_full = std::max(best_full, g.gflops_full);
    best_half = std::max(best_half, g.gflops_half);
    if (g.pair.total > parallel.total) {
      parallel = g.pair;
      parallel_library = cpu_gemm_name(g.gemm);
    }
  }
  // examples/s limit of 1 core (one thread at the global batch) and of 2 (two threads at once,
  // each at its replica's batch: measured, not assumed to be twice one).
  auto limit = [&](int replicas) {
    return (replicas == 1 ? best_full : parallel.total) * 1e9 / flops_per_example();
  };
  // The same if N cores ran N x the best single-thread rate at once (the limit before both cores
  // were measured together: reported beside it).
  auto limit_n_x_one = [&](int replicas) {
    return replicas * (replicas == 1 ? best_full : best_half) * 1e9 / flops_per_example();
  };
  // The ceiling under every library: the cores' multiply-add peak, 1 thread and 2 at once.
  const FmaPeak peak = measure_fma_peak(), peak_2 = measure_fma_peak_threads(2);
  std::vector<TrainResult> results;
  for (size_t i = 0; i < runs.size(); ++i)
    results.push_back({runs[i]->replicas(), runs[i]->path(), runs[i]->per_execution(), best[i]});
  if (json) {
    std::printf(
        "{\"limits\":{\"name\":\"executed GEMM FLOPs per example at the best sgemm rate on "
        "the step's GEMM shapes at each replica's batch, over every GEMM library, each rate "
        "timed over as many steps' GEMMs as one training sample; 1 core: one thread, 2 cores: "
        "two threads at once\",\"gemm_flops_per_example\":%.0f,\"sgemm_gflops\":%.3f,"
        "\"examples_per_s_limit\":%.1f,\"training_gemm\":\"%s\",\"onednn_isa\":\"%s\","
        "\"sgemm_gflops_2_threads_at_once\":%.3f,"
        "\"sgemm_gflops_2_threads_at_once_slower_thread\":%.3f,"
        "\"sgemm_2_threads_at_once_library\":\"%s\",\"fma_peak_gflops\":%.3f,"
        "\"fma_peak_gflops_2_threads_at_once\":%.3f,\"fma_peak_isa\":\"%s\",\"gemms\":[",
        flops_per_example(), std::max(best_full, best_half), limit(1),
        cpu_gemm_name(default_cpu_gemm()), onednn_cpu_isa().c_str(), parallel.total,
        parallel.slowest, parallel_library, peak.gflops, peak_2.gflops, peak.isa);
    for (size_t i = 0; i < gemms.size(); ++i)
      std::printf(
          "%s{\"library\":\"%s\",\"sgemm_gflops_batch_%d\":%.3f,"
          "\"sgemm_gflops_batch_%d\":%.3f}",
          i ? "," : "", cpu_gemm_name(gemms[i].gemm), int(kGlobalBatch), gemms[i].gflops_full,
          int(kGlobalBatch / 2), gemms[i].gflops_half);
    std::printf("]},\"results\":[");
    for (size_t i = 0; i < 2; ++i)  // troupe run's defaults
      std::printf(
          "%s{\"replicas\":%d,\"steps_per_execution\":%d,\"examples_per_s\":%.1f,"
          "\"examples_per_s_limit\":%.1f,\"ratio_to_limit\":%.3f,"
          "\"examples_per_s_limit_n_x_one_core\":%.1f,\"ratio_to_n_x_one_core\":%.3f}",
          i ? "," : "", results[i].replicas, results[i].per_execution, results[i].examples_per_s,
          limit(results[i].replicas), results[i].examples_per_s / limit(results[i].replicas),
          limit_n_x_one(results[i].replicas),
          results[i].examples_per_s / limit_n_x_one(results[i].replicas));
    std::printf("]}\n");
    return 0;
  }
  std::printf("GEMM FLOPs executed per example      %9.0f (train/gemm_flops)\n",
              flops_per_example());
  std::printf("training runs float32 GEMM on %s (oneDNN ISA: %s)\n",
              cpu_gemm_name(default_cpu_gemm()), onednn_cpu_isa().c_str());
  for (auto& g : gemms)
    std::printf("sgemm %-8s 1 thread, step GEMMs  %9.3f GFLOP/s at batch %d, %.3f at %d\n",
                cpu_gemm_name(g.gemm), g.gflops_full, int(kGlobalBatch), g.gflops_half,
                int(kGlobalBatch / 2));
  std::printf("multiply-add peak (%s, registers)  %9.3f GFLOP/s 1 thread, %.3f 2 at once\n",
              peak.isa, peak.gflops, peak_2.gflops);
  std::printf("limit, 1 core  (best at batch %3d)   %9.1f examples/s\n", int(kGlobalBatch),
              limit(1));
  std::printf(
      "limit, 2 cores (2 threads at once)   %9.1f examples/s (%s at batch %d: %.3f "
      "GFLOP/s = %.2f x 1 thread; the slower thread %.3f)\n",
      limit(2), parallel_library, int(kGlobalBatch / 2), parallel.total, parallel.total / best_half,
      parallel.slowest);
  std::printf("2 x 1 core (2 x best at %3d)         %9.1f examples/s\n", int(kGlobalBatch / 2),
              limit_n_x_one(2));
  // Each GEMM of a 2-replica step on its own: where one library beats the other.
  std::printf("per GEMM at batch %d, 1 thread (GFLOP/s):", int(kGlobalBatch / 2));
  for (auto& g : gemms) std::printf(" %9s", cpu_gemm_name(g.gemm));
  std::printf("\n");
  for (const auto& shape : mlp_step_gemms(kWidths, kGlobalBatch / 2)) {
    std::printf("  %4lld x %4lld x %4lld%-6s          ", (long long)shape.rows,
                (long long)shape.inner, (long long)shape.cols,
                shape.transpose_a   ? " (A^T)"
                : shape.transpose_b ? " (B^T)"
                                    : "");
    for (auto& g : gemms) std::printf(" %9.1f", measure_gemms_gflops(Ops(g.registry), {shape}, 50));
    std::printf("\n");
  }
  std::printf("%-9s %-11s %10s %14s %16s\n", "replicas", "path", "steps/run", "examples/s",
              "ratio_to_limit");
  for (auto& r : results)
    std::printf("%-9d %-11s %10d %14.1f %16.3f\n", r.replicas, path_name(r.path), r.per_execution,
                r.examples_per_s, r.examples_per_s / limit(r.replicas));
  // The unsynchronised ceiling with each GEMM library: the compute-only effect of the choice.
  for (auto& g : gemms) {
    Ops gemm_ops(g.registry);
    for (int threads : {1, 2}) {
      double bare = 0;
      for (int round = 0; round < rounds; ++round)
        bare = std::max(bare, measure_unsynchronised(gemm_ops, threads, data, steps));
      std::printf("unsynchronised threads, %d, %-8s %9.1f examples/s (the runtime's ceiling)\n",
                  threads, cpu_gemm_name(g.gemm), bare);
    }
  }
  std::printf("speed-up 2 vs 1 replica (troupe run's defaults, %d steps/run): %.2fx\n",
              per_execution, results[1].examples_per_s / results[0].examples_per_s);
  if (per_execution != 1)
    std::printf("speed-up 2 vs 1 replica (1 step/run): %.2fx\n",
                results[4].examples_per_s / results[3].examples_per_s);
  return 0;
}

}  // namespace troupe
