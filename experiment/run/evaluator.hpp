#pragma once
// The side-car evaluator (TF's SidecarEvaluator, spec cluster-and-ps.md §7.10.3): next to a
// training run, it evaluates each checkpoint the chief writes on the experiment's `eval` data —
// the model's forward pass with the checkpoint's variables, no optimizer — and records loss and
// accuracy in `<run dir>/eval/metrics.csv` (one row per checkpoint step) and as TensorBoard
// scalars `eval/loss`, `eval/accuracy` under `<run dir>/eval/`. Unlike TF's, which evaluates only
// the latest checkpoint, it evaluates every checkpoint still present, in step order; the rows
// already in metrics.csv are what it has done, so a restarted evaluator evaluates no step twice.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/data/dataset.hpp"
#include "messages/proto/experiment.pb.h"

namespace troupe {

class ModelRegistry;
class EventWriter;

/// One checkpoint's evaluation.
struct EvalResult {
  int64_t step = 0;
  double loss = 0;       ///< mean per-example loss over the eval data
  double accuracy = -1;  ///< classifiers (softmax, mlp); -1 for models without accuracy
  int64_t examples = 0;
};

/// The eval examples (features, label), batched by eval.batch (the last batch may be short).
/// Synthetic eval data are the training generator's examples after the data.examples training
/// ones (held out, same distribution); file data are read as training data are. Throws
/// failed_precondition when the experiment has no eval section.
data::Dataset make_eval_dataset(const proto::Experiment& experiment);

/// Loss and accuracy of the experiment's model with the variables of checkpoint `path` (a
/// "dir/ckpt-<step>" prefix) over all of eval.data, in batches of eval.batch. Throws
/// failed_precondition when the experiment has no eval section, the checkpoint reader's
/// not_found / data_loss for a missing or corrupt checkpoint, and invalid_argument / not_found
/// naming the tensor when the checkpoint belongs to another model.
EvalResult evaluate_checkpoint(const proto::Experiment& experiment, const std::string& path,
                               const ModelRegistry* registry = nullptr);

struct EvaluatorOptions {
  std::string run_dir;      ///< where the chief writes checkpoints; results go to run_dir/eval
  std::FILE* out = stdout;  ///< one line per evaluation, and warnings
  const ModelRegistry* registry = nullptr;  ///< nullptr: the built-in models
};

/// Evaluates the checkpoints of one run directory, remembering what it did in eval/metrics.csv.
class Evaluator {
 public:
  /// Reads eval/metrics.csv when it exists (a row cut short by a crash is removed). Throws
  /// failed_precondition when the experiment has no eval section.
  Evaluator(proto::Experiment experiment, EvaluatorOptions options);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  /// Evaluates every checkpoint in the run directory whose step has no row yet, in step order,
  /// appending a row and TensorBoard scalars for each. A checkpoint that cannot be read (corrupt,
  /// half-written, or removed by train.keep meanwhile) is skipped with a warning naming it, once.
  std::vector<EvalResult> evaluate_new();
  /// Whether `step` has a row in metrics.csv.
  bool evaluated(int64_t step) const { return evaluated_.count(step) > 0; }
  /// Whether `step`'s checkpoint was skipped as unreadable.
  bool skipped(int64_t step) const { return skipped_.count(step) > 0; }
  const std::string& metrics_csv() const { return metrics_csv_; }
  const std::string& eval_dir() const { return eval_dir_; }

 private:
  void append_row(const EvalResult& result);

  proto::Experiment experiment_;
  EvaluatorOptions options_;
  std::string eval_dir_, metrics_csv_;
  std::set<int64_t> evaluated_, skipped_;
  std::unique_ptr<EventWriter> events_;  // opened at the first evaluation
};

/// The evaluator task: evaluates new checkpoints every `poll` until the checkpoint of
/// `final_step` (the training's last step) has been evaluated (or skipped as unreadable), or until
/// `stop` is set. Returns the number of checkpoints evaluated.
int64_t run_evaluator(Evaluator& evaluator, int64_t final_step, const std::atomic<bool>* stop,
                      std::chrono::milliseconds poll = std::chrono::milliseconds(500));

}  // namespace troupe
