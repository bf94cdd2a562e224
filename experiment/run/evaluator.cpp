#include "experiment/run/evaluator.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "coordinator/strategy.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/checkpoint/checkpoint_files.hpp"
#include "experiment/run/event_writer.hpp"
#include "experiment/run/experiment_input.hpp"
#include "experiment/run/experiment_setup.hpp"
#include "train/registry.hpp"

namespace troupe {
namespace {

constexpr const char* kHeader = "step,loss,accuracy\n";

void require_eval(const proto::Experiment& e) {
  if (!e.has_eval())
    throw failed_precondition("experiment '" + e.name() +
                              "' has no eval section: the evaluator needs eval.data (see "
                              "docs/experiments.md)");
}

bool has_accuracy(const proto::Experiment& e) {
  return e.model().kind() == "softmax" || e.model().kind() == "mlp";
}

// The model's parameters, in compute() order, from the checkpoint; everything checked first.
std::vector<Tensor> checkpoint_parameters(const Model& model, const checkpoint::Checkpoint& ckpt,
                                          const std::string& path) {
  std::vector<Tensor> params;
  for (const auto& p : model.initial_parameters()) {
    auto it = ckpt.tensors.find(p.name);
    if (it == ckpt.tensors.end())
      throw not_found("checkpoint '" + path + "' has no tensor '" + p.name +
                      "' (written by a different model?)");
    if (it->second.dtype() != p.value.dtype() || it->second.shape() != p.value.shape())
      throw invalid_argument("checkpoint '" + path + "': tensor '" + p.name + "' is " +
                             it->second.description() + " but the model needs " +
                             p.value.description());
    params.push_back(it->second);
  }
  return params;
}

// One write(2) of a whole row on an O_APPEND descriptor, then fsync: a reader never sees half a
// row unless the machine dies mid-write, and the constructor repairs that case.
void append_bytes(const std::string& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw internal_error("cannot open " + path + ": " + std::strerror(errno));
  ssize_t written = ::write(fd, bytes.data(), bytes.size());
  int saved = errno;
  bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (written != ssize_t(bytes.size()) || !synced)
    throw internal_error("cannot append to " + path + ": " +
                         std::strerror(written < 0 ? saved : EIO));
}

std::string format_row(const EvalResult& r) {
  char row[128];
  if (r.accuracy >= 0)
    std::snprintf(row, sizeof row, "%lld,%.9g,%.9g\n", static_cast<long long>(r.step), r.loss,
                  r.accuracy);
  else
    std::snprintf(row, sizeof row, "%lld,%.9g,\n", static_cast<long long>(r.step), r.loss);
  return row;
}

}  // namespace

data::Dataset make_eval_dataset(const proto::Experiment& e) {
  require_eval(e);
  proto::Experiment source = e;
  const proto::DataSpec& eval = e.eval().data();
  data::Dataset examples = [&] {
    if (eval.kind().rfind("synthetic_", 0) == 0) {
      // Element i of a synthetic generator depends only on (seed, i): the eval examples are the
      // ones after the training examples.
      const int64_t held_out = e.data().examples();
      source.mutable_data()->set_examples(held_out + eval.examples());
      return make_examples_dataset(source).skip(held_out);
    }
    *source.mutable_data() = eval;
    return make_examples_dataset(source);
  }();
  return examples.batch(e.eval().batch(), /*drop_remainder=*/false);
}

// Loss and accuracy with the variables of `ckpt` (read from `path`).
static EvalResult evaluate_loaded(const proto::Experiment& e, const checkpoint::Checkpoint& ckpt,
                                  const std::string& path, const ModelRegistry* registry) {
  require_eval(e);
  std::optional<ModelRegistry> builtins;
  if (!registry) builtins = ModelRegistry::with_builtins();
  std::shared_ptr<const Model> model =
      (registry ? *registry : *builtins).create_model(e.model().kind(), make_model_config(e));
  const std::vector<Tensor> params = checkpoint_parameters(*model, ckpt, path);
  const std::shared_ptr<const KernelRegistry> kernels = default_kernels();  // Ops keeps a pointer
  const Ops ops(*kernels);
  double loss_sum = 0;
  int64_t correct = 0, rows = 0;
  data::Iterator batches = make_eval_dataset(e).make_iterator();
  while (auto batch = batches.next()) {
    const Tensor& features = batch->at(0);
    const int64_t n = features.shape().dims().empty() ? 0 : features.shape().dims()[0];
    // Forward only: with_grads false, and the per-example sum over this batch's own rows.
    LossStats stats = model->compute(ops, params, features, batch->at(1), n, false).stats;
    loss_sum += stats.loss_sum;
    correct += stats.correct;
    rows += stats.rows;
  }
  if (rows == 0)
    throw failed_precondition("eval.data of experiment '" + e.name() + "' holds no examples");
  EvalResult result;
  result.step = ckpt.step;
  result.examples = rows;
  result.loss = loss_sum / double(rows);
  if (has_accuracy(e)) result.accuracy = double(correct) / double(rows);
  return result;
}

EvalResult evaluate_checkpoint(const proto::Experiment& e, const std::string& path,
                               const ModelRegistry* registry) {
  require_eval(e);
  return evaluate_loaded(e, checkpoint::read_checkpoint(path), path, registry);
}

Evaluator::Evaluator(proto::Experiment experiment, EvaluatorOptions options)
    : experiment_(std::move(experiment)), options_(std::move(options)) {
  require_eval(experiment_);
  eval_dir_ = options_.run_dir + "/eval";
  metrics_csv_ = eval_dir_ + "/metrics.csv";
  std::filesystem::create_directories(eval_dir_);
  std::ifstream in(metrics_csv_, std::ios::binary);
  std::stringstream text;
  if (in) text << in.rdbuf();
  std::string content = text.str();
  in.close();
  // A row cut short (the machine died mid-write) is removed: that step is evaluated again.
  const size_t complete = content.rfind('\n') == std::string::npos ? 0 : content.rfind('\n') + 1;
  if (complete != content.size()) {
    content.resize(complete);
    checkpoint::atomic_write_file(metrics_csv_, content);
  }
  std::istringstream lines(content);
  std::string line;
  bool header = true;
  while (std::getline(lines, line)) {
    if (header) {
      if (line + "\n" != kHeader)
        throw failed_precondition(metrics_csv_ + " does not start with the header " +
                                  std::string(kHeader, std::strlen(kHeader) - 1) +
                                  " (not written by the evaluator?)");
      header = false;
      continue;
    }
    try {
      evaluated_.insert(std::stoll(line.substr(0, line.find(','))));
    } catch (const std::exception&) {
      throw failed_precondition(metrics_csv_ + ": row \"" + line + "\" does not start with a step");
    }
  }
  if (content.empty()) append_bytes(metrics_csv_, kHeader);
}

Evaluator::~Evaluator() = default;

void Evaluator::append_row(const EvalResult& r) {
  append_bytes(metrics_csv_, format_row(r));
  if (!events_) events_ = std::make_unique<EventWriter>(eval_dir_);
  std::vector<std::pair<std::string, float>> scalars{{"eval/loss", float(r.loss)}};
  if (r.accuracy >= 0) scalars.emplace_back("eval/accuracy", float(r.accuracy));
  events_->add_scalars(r.step, scalars);
}

std::vector<EvalResult> Evaluator::evaluate_new() {
  std::vector<EvalResult> done;
  for (int64_t step : checkpoint::manifest_steps(options_.run_dir)) {
    if (evaluated(step) || skipped(step)) continue;
    const std::string path = checkpoint::checkpoint_prefix(options_.run_dir, step);
    std::optional<checkpoint::Checkpoint> ckpt;
    try {
      ckpt = checkpoint::read_checkpoint(path);  // verified whole: CRCs, sizes, files
    } catch (const Error& e) {
      // Corrupt, half-written, or removed by train.keep since it was listed: not this
      // evaluator's to fix, and the next checkpoint is as good.
      std::fprintf(options_.out, "warning: evaluator: skipping checkpoint %s: %s\n", path.c_str(),
                   e.what());
      std::fflush(options_.out);
      skipped_.insert(step);
      continue;
    }
    // A checkpoint of another model is a configuration error: that throws.
    const EvalResult result = evaluate_loaded(experiment_, *ckpt, path, options_.registry);
    append_row(result);
    evaluated_.insert(step);
    const std::string accuracy =
        result.accuracy >= 0 ? " accuracy " + std::to_string(result.accuracy) : "";
    std::fprintf(options_.out, "eval step %lld: loss %.6f%s over %lld examples\n",
                 static_cast<long long>(result.step), result.loss, accuracy.c_str(),
                 static_cast<long long>(result.examples));
    std::fflush(options_.out);
    done.push_back(result);
  }
  return done;
}

int64_t run_evaluator(Evaluator& evaluator, int64_t final_step, const std::atomic<bool>* stop,
                      std::chrono::milliseconds poll) {
  int64_t count = 0;
  while (true) {
    count += int64_t(evaluator.evaluate_new().size());
    if (evaluator.evaluated(final_step) || evaluator.skipped(final_step)) return count;
    if (stop && stop->load()) return count;
    // Polling, as TF's evaluator does: the chief's checkpoints may be on a shared file system
    // where change notifications do not travel.
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace troupe
