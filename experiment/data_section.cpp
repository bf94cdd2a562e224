// Reader for the `data` section: synthetic generators, TFRecord and CSV files.
#include <algorithm>

#include "experiment/experiment_file.hpp"
#include "experiment/experiment_sections.hpp"

namespace troupe::experiment {
namespace {

// Features in YAML order (a protobuf map forgets it): a csv row holds them in this order (a
// feature of shape [k] is k consecutive columns), and the non-label features are concatenated
// into the model input in this order.
void read_feature_map(const Field& field, SourceMap& source, const std::string& kind,
                      proto::DataSpec* out) {
  if (!field.node.IsMap() || field.node.size() == 0)
    throw source.error(field.path, "expected a mapping of feature names to {dtype, shape}, got " +
                                       describe_node(field.node));
  for (auto it = field.node.begin(); it != field.node.end(); ++it) {
    std::string name = it->first.Scalar();
    Field feature{it->second, field.path + "." + name};
    if (it->first.Mark().line >= 0)
      source.record(feature.path, it->first.Mark().line + 1, it->first.Mark().column + 1);
    if (out->features().count(name)) throw source.error(feature.path, "duplicate feature");
    MapFields spec(feature, source, {"dtype", "shape"});
    proto::FeatureSpec parsed;
    parsed.set_dtype(
        read_choice(spec.require("dtype"), source, {"float32", "float64", "int32", "int64"}));
    if (auto shape = spec.get("shape"))
      for (const auto& dim : read_list(*shape, source))
        parsed.add_shape(read_integer(dim, source, 1));
    (*out->mutable_features())[name] = parsed;
    out->add_feature_order(name);  // YAML order: csv column order, and the input's layout
  }
}

}  // namespace

void read_data(const Field& field, SourceMap& source, proto::DataSpec* out) {
  MapFields data(field, source,
                 {"kind", "examples", "global_batch", "files", "features", "label", "header",
                  "shuffle", "shuffle_buffer", "prefetch", "input_dim", "classes", "distribute",
                  "auto_shard", "users", "items", "rank"});
  out->set_kind(read_choice(data.require("kind"), source,
                            {"synthetic_classification", "synthetic_regression",
                             "synthetic_ratings", "tfrecord", "csv"}));
  const std::string& kind = out->kind();
  bool synthetic = kind.rfind("synthetic_", 0) == 0;
  out->set_global_batch(read_integer(data.require("global_batch"), source, 1));
  if (synthetic) {
    out->set_examples(read_integer(data.require("examples"), source, 1));
    for (const char* key : {"files", "features", "label", "header"})
      if (auto f = data.get(key)) throw source.error(f->path, "not used by data kind " + kind);
    if (kind == "synthetic_ratings") {
      // (user, item) ids, not features: the tables' sizes bound them, not an input width.
      if (auto dim = data.get("input_dim"))
        throw source.error(dim->path, "not used by data kind " + kind + " (ids are (user, item))");
      if (auto users = data.get("users")) out->set_users(read_integer(*users, source, 1));
      if (auto items = data.get("items")) out->set_items(read_integer(*items, source, 1));
      if (auto rank = data.get("rank")) out->set_rank(read_integer(*rank, source, 1));
    } else {
      for (const char* key : {"users", "items", "rank"})
        if (auto f = data.get(key))
          throw source.error(f->path,
                             "not used by data kind " + kind + " (synthetic_ratings only)");
    }
    if (auto dim = data.get("input_dim")) out->set_input_dim(read_integer(*dim, source, 1));
    if (auto classes = data.get("classes")) {
      if (kind != "synthetic_classification")
        throw source.error(classes->path, "not used by data kind " + kind);
      out->set_classes(read_integer(*classes, source, 2));
    }
  } else {
    for (const char* key : {"users", "items", "rank"})
      if (auto f = data.get(key))
        throw source.error(f->path, "not used by data kind " + kind + " (synthetic_ratings only)");
    for (const char* key : {"input_dim", "classes"})
      if (auto f = data.get(key))
        throw source.error(f->path, "not used by data kind " + kind + " (features set it)");
    if (auto examples = data.get("examples")) out->set_examples(read_integer(*examples, source, 1));
    auto files = read_list(data.require("files"), source);
    if (files.empty())
      throw source.error(child_path(data.path(), "files"), "expected at least one file");
    for (const auto& f : files) out->add_files(read_string(f, source));
    read_feature_map(data.require("features"), source, kind, out);
    Field label = data.require("label");
    out->set_label(read_string(label, source));
    if (!out->features().count(out->label()))
      throw source.error(label.path, "label \"" + out->label() + "\" is not one of the features");
    if (out->features().size() < 2)
      throw source.error(child_path(data.path(), "features"),
                         "needs at least one feature besides the label");
    if (auto header = data.get("header")) {
      if (kind != "csv") throw source.error(header->path, "not used by data kind " + kind);
      out->set_header(read_bool(*header, source));
    }
  }
  if (auto shuffle = data.get("shuffle")) out->set_shuffle(read_bool(*shuffle, source));
  if (auto buffer = data.get("shuffle_buffer")) {
    if (!out->shuffle()) throw source.error(buffer->path, "shuffle_buffer needs shuffle: true");
    out->set_shuffle_buffer(read_integer(*buffer, source, 1));
  }
  // Not given: kPrefetchAuto, which parse_experiment resolves once train.steps_per_execution is
  // known (experiment::default_prefetch). 0: no read-ahead, each step is read when asked for.
  out->set_prefetch(kPrefetchAuto);
  if (auto prefetch = data.get("prefetch")) out->set_prefetch(read_integer(*prefetch, source, 0));
  out->set_distribute("dataset");
  if (auto distribute = data.get("distribute"))
    out->set_distribute(read_choice(*distribute, source, {"dataset", "from_function"}));
  out->set_auto_shard("auto");
  if (auto shard = data.get("auto_shard"))
    out->set_auto_shard(read_choice(*shard, source, {"auto", "file", "data", "off"}));
}

int64_t data_input_dim(const proto::DataSpec& data) {
  if (data.kind().rfind("synthetic_", 0) == 0) return data.input_dim();
  int64_t width = 0;
  for (const auto& [name, feature] : data.features())
    if (name != data.label()) width += feature_elements(feature);
  return width;
}

int64_t feature_elements(const proto::FeatureSpec& feature) {
  int64_t elements = 1;
  for (int64_t d : feature.shape()) elements *= d;
  return elements;
}

}  // namespace troupe::experiment
