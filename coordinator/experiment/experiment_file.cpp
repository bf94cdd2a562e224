#include "coordinator/experiment/experiment_file.hpp"

#include <fstream>
#include <sstream>

#include "coordinator/experiment/experiment_sections.hpp"

namespace troupe::experiment {

proto::Experiment parse_experiment(std::string_view yaml_text, const std::string& source_name) {
  SourceMap source(source_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw invalid_argument(source_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": invalid YAML: " + e.msg);
  }
  if (root.IsDefined() && !root.IsNull() && root.Mark().line >= 0)
    source.record("", root.Mark().line + 1, root.Mark().column + 1);
  if (!root.IsMap())
    throw source.error("", "expected a mapping of experiment keys, got " + describe_node(root));
  MapFields top({root, ""}, source,
                {"name", "seed", "strategy", "model", "data", "optimizer", "train"});
  proto::Experiment experiment;
  experiment.set_name(read_string(top.require("name"), source));
  if (auto seed = top.get("seed")) experiment.set_seed(uint64_t(read_integer(*seed, source, 0)));
  read_strategy(top.require("strategy"), source, experiment.mutable_strategy());
  read_model(top.require("model"), source, experiment.mutable_model());
  read_data(top.require("data"), source, experiment.mutable_data());
  read_optimizer(top.require("optimizer"), source, experiment.mutable_optimizer());
  read_train(top.require("train"), source, experiment.mutable_train());
  check_experiment(experiment, source);
  return experiment;
}

proto::Experiment load_experiment(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw not_found("cannot read experiment file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_experiment(text.str(), path);
}

proto::Experiment default_experiment() {
  return parse_experiment(kDefaultExperimentYaml, "<default experiment>");
}

}  // namespace troupe::experiment
