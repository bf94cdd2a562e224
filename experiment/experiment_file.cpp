#include "experiment/experiment_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiment/experiment_sections.hpp"
#include "experiment/memory_estimate.hpp"
#include "train/registry.hpp"

namespace troupe::experiment {

proto::Experiment parse_experiment(std::string_view yaml_text, const std::string& source_name,
                                   const ModelRegistry* registry) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw invalid_argument(source_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": invalid YAML: " + e.msg);
  }
  return parse_experiment_tree(root, source_name, registry);
}

proto::Experiment parse_experiment_tree(const YAML::Node& root, const std::string& source_name,
                                        const ModelRegistry* registry) {
  SourceMap source(source_name);
  if (root.IsDefined() && !root.IsNull() && root.Mark().line >= 0)
    source.record("", root.Mark().line + 1, root.Mark().column + 1);
  if (!root.IsMap())
    throw source.error("", "expected a mapping of experiment keys, got " + describe_node(root));
  MapFields top({root, ""}, source,
                {"name", "seed", "strategy", "model", "data", "optimizer", "train", "eval"});
  proto::Experiment experiment;
  experiment.set_name(read_string(top.require("name"), source));
  // The name becomes the run directory runs/<name>: a separator or ".." would put it elsewhere.
  const std::string& name = experiment.name();
  if (name.empty() || name.find('/') != std::string::npos || name.find('\\') != std::string::npos ||
      name.find("..") != std::string::npos)
    throw source.error("name", "\"" + name +
                                   "\" is not a plain directory name (it becomes runs/<name>: no "
                                   "'/', '\\' or '..', not empty); use train.checkpoint_dir or "
                                   "--dir to choose where the run goes");
  if (auto seed = top.get("seed")) experiment.set_seed(uint64_t(read_integer(*seed, source, 0)));
  read_strategy(top.require("strategy"), source, experiment.mutable_strategy());
  read_model(top.require("model"), source, experiment.mutable_model());
  read_data(top.require("data"), source, experiment.mutable_data());
  read_optimizer(top.require("optimizer"), source, experiment.mutable_optimizer());
  const auto step_names =
      registry ? registry->step_names() : ModelRegistry::with_builtins().step_names();
  read_train(top.require("train"), source, step_names, experiment.mutable_train());
  check_experiment(experiment, source);
  // After the checks: the default depends on the batch's bytes, known once the model is.
  if (experiment.data().prefetch() == kPrefetchAuto)
    experiment.mutable_data()->set_prefetch(default_prefetch(experiment));
  check_memory(experiment, source, available_memory_bytes());
  if (auto eval = top.get("eval")) read_eval(*eval, source, &experiment);
  return experiment;
}

proto::Experiment load_experiment(const std::string& path, const ModelRegistry* registry) {
  // An ifstream opens a directory and reads nothing, which would parse as an empty document.
  if (std::filesystem::is_directory(path))
    throw invalid_argument("experiment file " + path + " is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw not_found("cannot read experiment file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  proto::Experiment experiment = parse_experiment(text.str(), path, registry);
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  for (auto& file : *experiment.mutable_data()->mutable_files())
    if (std::filesystem::path(file).is_relative()) file = (base / file).lexically_normal().string();
  if (experiment.has_eval())  // mutable_eval() would create the section
    for (auto& file : *experiment.mutable_eval()->mutable_data()->mutable_files())
      if (std::filesystem::path(file).is_relative())
        file = (base / file).lexically_normal().string();
  return experiment;
}

proto::Experiment default_experiment() {
  return parse_experiment(kDefaultExperimentYaml, "<default experiment>");
}

}  // namespace troupe::experiment
