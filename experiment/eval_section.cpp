// Reader for the `eval` section: the data the side-car evaluator runs each checkpoint's forward
// pass over. It is a data section (same kinds and keys as `data`) without the keys that only
// shape a training pipeline, plus `batch`.
#include "experiment/experiment_sections.hpp"
#include "messages/proto/experiment.pb.h"

namespace troupe::experiment {
namespace {

// Keys of `data` that shape the training pipeline only: evaluation reads every example once, in
// order, batched by eval.batch, so accepting them would mean ignoring them.
constexpr const char* kTrainingOnlyKeys[] = {"global_batch", "shuffle",    "shuffle_buffer",
                                             "prefetch",     "distribute", "auto_shard"};

}  // namespace

void read_eval(const Field& field, SourceMap& source, proto::Experiment* experiment) {
  MapFields eval(field, source, {"data", "batch"});
  const Field data = eval.require("data");
  // Looked up through a const node: operator[] on a mutable one would add the key.
  const YAML::Node& given = data.node;
  if (given.IsMap())
    for (const char* key : kTrainingOnlyKeys)
      if (given[key])
        throw source.error(
            child_path(data.path, key),
            std::string("not used by evaluation (it reads every example once, in "
                        "order") +
                (std::string(key) == "global_batch" ? "; eval.batch sets the batch)" : ")"));
  int64_t batch = experiment->data().global_batch();
  if (auto b = eval.get("batch")) batch = read_integer(*b, source, 1);
  // The data reader wants global_batch: give it eval.batch on a copy of the node.
  YAML::Node with_batch = YAML::Clone(data.node);
  if (with_batch.IsMap()) with_batch["global_batch"] = batch;
  proto::EvalSpec* out = experiment->mutable_eval();
  read_data({with_batch, data.path}, source, out->mutable_data());
  out->set_batch(batch);

  const proto::DataSpec& eval_data = out->data();
  const proto::DataSpec& train_data = experiment->data();
  if (eval_data.kind().rfind("synthetic_", 0) == 0) {
    // Synthetic eval examples are the generator's examples after the training ones (held out,
    // same class means), so they need the training generator and its sizes.
    if (eval_data.kind() != train_data.kind())
      throw source.error(child_path(data.path, "kind"),
                         "synthetic eval data are held-out examples of the training data's "
                         "generator, so they need data.kind " +
                             eval_data.kind() + " (data.kind is " + train_data.kind() + ")");
    for (const char* key : {"input_dim", "classes"})
      if (given.IsMap() && given[key])
        throw source.error(child_path(data.path, key),
                           "comes from the training data (synthetic eval data are held-out "
                           "examples of the same generator)");
    out->mutable_data()->set_input_dim(train_data.input_dim());
    out->mutable_data()->set_classes(train_data.classes());
    return;
  }
  // File data: the same label and width checks as the training data, against the model.
  proto::Experiment as_training = *experiment;
  *as_training.mutable_data() = eval_data;
  try {
    check_experiment(as_training, source);
  } catch (const Error& e) {
    throw source.error(data.path, std::string("does not fit the model: ") + e.what());
  }
}

}  // namespace troupe::experiment
