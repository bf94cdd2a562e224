// Parsing a comparison file: the compare section, then every variant as a whole experiment.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "coordinator/device_inventory.hpp"
#include "core/device_spec.hpp"
#include "experiment/compare/compare_spec.hpp"
#include "experiment/compare/yaml_overrides.hpp"
#include "experiment/experiment_sections.hpp"

namespace troupe::experiment {
namespace {

// `troupe launch -n N` refuses more (cli/command_launch.cpp).
constexpr int64_t kMaxLaunchedWorkers = 256;

YAML::Node load_yaml(std::string_view text, const std::string& source_name) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw invalid_argument(source_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": invalid YAML: " + e.msg);
  }
}

// "file:L:C: key: message" -> "file:L:C: variant "v" (compare.variants[i]): key: message".
Error name_variant(const std::string& message, const std::string& source_name,
                   const std::string& variant, size_t index) {
  const std::string label =
      "variant \"" + variant + "\" (compare.variants[" + std::to_string(index) + "]): ";
  size_t at = message.rfind(source_name, 0) == 0 ? message.find(": ", source_name.size())
                                                 : std::string::npos;
  if (at == std::string::npos) return invalid_argument(label + message);
  return invalid_argument(message.substr(0, at + 2) + label + message.substr(at + 2));
}

// The base's tree with variant `index`'s overrides applied and the compare section removed; a
// fresh tree each time (overrides change it in place).
YAML::Node variant_tree(std::string_view text, const std::string& source_name, size_t index) {
  YAML::Node tree = load_yaml(text, source_name);
  const YAML::Node overrides = tree["compare"]["variants"][index];
  tree.remove("compare");
  YAML::Node changes(YAML::NodeType::Map);
  for (auto it = overrides.begin(); it != overrides.end(); ++it)
    if (it->first.Scalar() != "name" && it->first.Scalar() != "workers")
      changes.force_insert(it->first, it->second);
  apply_overrides(tree, changes);
  return tree;
}

StopRule read_stop(const Field& field, SourceMap& source) {
  MapFields stop(field, source, {"steps", "wall_seconds", "target_loss"});
  StopRule rule;
  if (auto steps = stop.get("steps")) rule.steps = read_integer(*steps, source, 1);
  if (auto wall = stop.get("wall_seconds")) {
    rule.wall_seconds = read_number(*wall, source);
    if (rule.wall_seconds <= 0)
      throw source.error(wall->path, "a wall time of " + wall->node.Scalar() +
                                         " s is over before the first step; give seconds > 0");
  }
  if (auto target = stop.get("target_loss")) {
    rule.target_loss = read_number(*target, source);
    if (rule.target_loss < 0)
      throw source.error(target->path, "the loss is never below 0, so target_loss " +
                                           target->node.Scalar() + " would never be reached");
  }
  if (!rule.steps && rule.wall_seconds <= 0 && !rule.has_target_loss())
    throw source.error(field.path, "give at least one of steps, wall_seconds, target_loss");
  return rule;
}

// What the experiment parser cannot know: whether this machine and this command can run it.
void check_runnable(const CompareVariant& variant, const StopRule& stop, const Field& field,
                    SourceMap& source) {
  const auto& e = variant.experiment;
  const int gpus = visible_gpu_count();
  for (int i = 0; i < e.strategy().devices_size(); ++i) {
    auto spec = DeviceSpec::parse(e.strategy().devices(i));
    if (spec.device_type.value_or("CPU") == "GPU" && spec.device_index.value_or(0) >= gpus)
      throw source.error(child_path(field.path, "strategy.devices[" + std::to_string(i) + "]"),
                         e.strategy().devices(i) + " is not on this machine (it has " +
                             std::to_string(gpus) + " GPU(s))");
  }
  if (variant.workers > 1 && e.strategy().kind() != "multi_worker_mirrored")
    throw source.error(child_path(field.path, "workers"),
                       std::to_string(variant.workers) +
                           " workers need strategy.kind multi_worker_mirrored (the variant's "
                           "kind is " +
                           e.strategy().kind() + ")");
  if (!e.train().checkpoint_dir().empty())
    throw source.error(child_path(field.path, "train.checkpoint_dir"),
                       "troupe compare puts each variant's run under its --out directory; remove "
                       "train.checkpoint_dir");
  if ((stop.has_target_loss() || stop.wall_seconds > 0) && e.train().log_every() == 0)
    throw source.error(child_path(field.path, "train.log_every"),
                       "the stopping rule is checked at each logged step, but log_every 0 logs "
                       "only the last one; give log_every > 0");
}

std::string variant_name(const MapFields& variant, SourceMap& source) {
  Field field = variant.require("name");
  std::string name = read_string(field, source);
  // The name becomes a directory under --out.
  if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos ||
      name.find("..") != std::string::npos || name == ".")
    throw source.error(field.path, "\"" + name +
                                       "\" is not a plain directory name (no '/', '\\' or "
                                       "'..'): it names the variant's run directory");
  return name;
}

}  // namespace

CompareSpec parse_compare(std::string_view yaml_text, const std::string& source_name,
                          const ModelRegistry* registry) {
  CompareSpec spec;
  spec.yaml = std::string(yaml_text);
  YAML::Node root = load_yaml(yaml_text, source_name);
  SourceMap source(source_name);
  if (!root.IsMap())
    throw source.error("", "expected a mapping of experiment keys, got " + describe_node(root));
  if (!root["compare"])
    throw source.error("compare",
                       "required key is missing (a comparison lists its variants "
                       "under compare:)");
  // The base alone must be a valid experiment: a mistake there is nobody's variant.
  {
    YAML::Node base = load_yaml(yaml_text, source_name);
    base.remove("compare");
    spec.name = parse_experiment_tree(base, source_name, registry).name();
  }
  MapFields compare({root["compare"], "compare"}, source, {"stop", "variants"});
  spec.stop = read_stop(compare.require("stop"), source);
  auto variants = read_list(compare.require("variants"), source);
  if (variants.empty()) throw source.error("compare.variants", "expected at least one variant");
  std::set<std::string> names;
  for (size_t i = 0; i < variants.size(); ++i) {
    const Field& field = variants[i];
    // Its name and worker count, and the experiment keys it may override. `seed` stays the
    // base's, so every variant starts from the same weights and reads the same data in order.
    MapFields variant(field, source,
                      {"name", "workers", "strategy", "model", "data", "optimizer", "train"});
    CompareVariant v;
    v.name = variant_name(variant, source);
    if (!names.insert(v.name).second)
      throw source.error(child_path(field.path, "name"),
                         "duplicate variant name \"" + v.name + "\"");
    if (auto workers = variant.get("workers")) {
      const int64_t n = read_integer(*workers, source, 1);
      // troupe launch starts at most this many local processes.
      if (n > kMaxLaunchedWorkers)
        throw source.error(workers->path, std::to_string(n) +
                                              " workers are more than troupe "
                                              "launch starts (at most " +
                                              std::to_string(kMaxLaunchedWorkers) + ")");
      v.workers = int(n);
    }
    if (spec.stop.steps > 0) {
      // compare.stop.steps sets every variant's steps: a variant's own would be ignored.
      const YAML::Node& overrides = field.node;
      const YAML::Node train = overrides["train"];
      if (train.IsDefined() && train.IsMap() && train["steps"])
        throw name_variant(source
                               .error(child_path(field.path, "train.steps"),
                                      "compare.stop.steps sets every variant's steps; remove "
                                      "train.steps from the variant")
                               .what(),
                           source_name, v.name, i);
    }
    YAML::Node tree = variant_tree(yaml_text, source_name, i);
    try {
      v.experiment = parse_experiment_tree(tree, source_name, registry);
      if (spec.stop.steps > 0) v.experiment.mutable_train()->set_steps(spec.stop.steps);
      check_runnable(v, spec.stop, field, source);
    } catch (const Error& e) {
      throw name_variant(e.what(), source_name, v.name, i);
    }
    spec.variants.push_back(std::move(v));
  }
  return spec;
}

CompareSpec load_compare(const std::string& path, const ModelRegistry* registry) {
  if (std::filesystem::is_directory(path))
    throw invalid_argument("comparison file " + path + " is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw not_found("cannot read comparison file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  CompareSpec spec = parse_compare(text.str(), path, registry);
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  for (auto& variant : spec.variants)
    for (auto& file : *variant.experiment.mutable_data()->mutable_files())
      if (std::filesystem::path(file).is_relative())
        file = (base / file).lexically_normal().string();
  return spec;
}

std::string variant_experiment_yaml(const CompareSpec& spec, size_t variant_index) {
  const CompareVariant& variant = spec.variants.at(variant_index);
  YAML::Node tree = variant_tree(spec.yaml, "<comparison>", variant_index);
  tree["train"]["steps"] = variant.experiment.train().steps();
  // Files resolved against the comparison's directory: the variant's file lives elsewhere.
  if (variant.experiment.data().files_size() > 0) {
    YAML::Node files(YAML::NodeType::Sequence);
    for (const auto& file : variant.experiment.data().files()) files.push_back(file);
    tree["data"]["files"] = files;
  }
  YAML::Emitter out;
  out << tree;
  return std::string(out.c_str()) + "\n";
}

}  // namespace troupe::experiment
