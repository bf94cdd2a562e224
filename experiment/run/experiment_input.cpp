#include "experiment/run/experiment_input.hpp"

#include <algorithm>

#include "coordinator/strategy.hpp"
#include "core/data/synthetic.hpp"
#include "core/data/synthetic_ratings.hpp"
#include "experiment/memory_estimate.hpp"
#include "experiment/run/file_examples.hpp"

namespace troupe {
namespace {

int64_t feature_width(const proto::Experiment& e) {
  return e.data().input_dim() > 0 ? e.data().input_dim() : e.model().input_dim();
}

}  // namespace

data::Dataset make_examples_dataset(const proto::Experiment& e, int64_t cache_bytes) {
  const auto& d = e.data();
  if (d.kind() == "synthetic_classification") {
    data::ClassificationOptions o;
    o.num_examples = d.examples();
    o.num_features = feature_width(e);
    o.num_classes = d.classes() > 0 ? d.classes() : e.model().classes();
    o.seed = e.seed();
    o.cache_bytes = cache_bytes;
    return data::synthetic_classification(o);
  }
  if (d.kind() == "synthetic_regression") {
    data::RegressionOptions o;
    o.num_examples = d.examples();
    o.num_features = feature_width(e);
    o.num_targets = e.model().units() > 0 ? e.model().units() : 1;  // labels follow model.units
    o.seed = e.seed();
    o.cache_bytes = cache_bytes;
    return data::synthetic_regression(o);
  }
  if (d.kind() == "synthetic_ratings") {
    data::RatingsOptions o;
    o.num_examples = d.examples();
    o.num_users = d.users() > 0 ? d.users() : e.model().num_users();  // ids follow the tables
    o.num_items = d.items() > 0 ? d.items() : e.model().num_items();
    o.rank = d.rank() > 0 ? d.rank() : 2;
    o.seed = e.seed();
    return data::synthetic_ratings(o);
  }
  if (d.kind() == "tfrecord" || d.kind() == "csv") {
    const std::string& model = e.model().kind();
    const bool squared_error = model == "linear" || model == "embedding";
    data::Dataset ds = file_examples(d, model == "embedding", squared_error);
    return d.examples() > 0 ? ds.take(d.examples()) : ds;
  }
  throw invalid_argument("data.kind: unknown data kind '" + d.kind() + "'");
}

data::Dataset make_training_pipeline(const proto::Experiment& e, const data::InputContext& context,
                                     int64_t batch) {
  const auto& d = e.data();
  // The first-epoch cache only pays where batch() fills rows: without a shuffle in between
  // (experiment::synthetic_cache_bytes counts it in the memory estimate on the same terms).
  data::Dataset ds = make_examples_dataset(e, d.shuffle() ? 0 : experiment::kSyntheticCacheBudget);
  // from_function pipelines are not auto-sharded: each takes its own share, as a TF dataset
  // function does with ctx.shard.
  if (context.num_input_pipelines() > 1)
    ds = ds.shard(context.num_input_pipelines(), context.input_pipeline_id());
  if (d.shuffle()) ds = ds.shuffle(d.shuffle_buffer() > 0 ? d.shuffle_buffer() : 10000, e.seed());
  return ds.repeat().batch(batch, /*drop_remainder=*/true);
}

data::AutoShardPolicy auto_shard_policy(const proto::DataSpec& d) {
  const std::string& p = d.auto_shard();
  if (p.empty() || p == "auto") return data::AutoShardPolicy::auto_;
  if (p == "file") return data::AutoShardPolicy::file;
  if (p == "data") return data::AutoShardPolicy::data;
  if (p == "off") return data::AutoShardPolicy::off;
  throw invalid_argument("data.auto_shard: unknown policy '" + p + "' (auto, file, data, off)");
}

InputOptions make_input_options(const proto::Experiment& e, InputOptions base) {
  // data.prefetch steps produced ahead on the input worker's reader thread while the replicas
  // train (parse_experiment writes 2 x train.steps_per_execution when not given); 0: none.
  base.experimental_per_replica_buffer_size = std::max<int64_t>(0, e.data().prefetch());
  return base;
}

ExperimentInput make_experiment_input(caf::actor_system& system, Strategy& strategy,
                                      const proto::Experiment& e, InputOptions base) {
  const InputOptions options = make_input_options(e, base);
  const int64_t global_batch = e.data().global_batch();
  if (e.data().distribute() != "from_function")
    return {experimental_distribute_dataset(
                system, strategy,
                make_training_pipeline(e, data::InputContext(), global_batch)
                    .with_auto_shard_policy(auto_shard_policy(e.data())),
                options),
            {}};
  std::vector<data::InputContext> contexts;
  auto dataset = distribute_datasets_from_function(
      system, strategy,
      [&](const data::InputContext& context) {
        contexts.push_back(context);
        return make_training_pipeline(e, context, context.get_per_replica_batch_size(global_batch));
      },
      options);
  return {std::move(dataset), std::move(contexts)};
}

}  // namespace troupe
