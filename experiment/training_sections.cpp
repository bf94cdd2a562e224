// Readers for the `optimizer` and `train` sections of an experiment file.
#include <algorithm>

#include "experiment/experiment_file.hpp"
#include "experiment/experiment_sections.hpp"

namespace troupe::experiment {
namespace {

// A hyper-parameter in [low, high) (or (low, high) when `open_low`), with its default.
double read_bounded(const MapFields& map, const std::string& key, const SourceMap& source,
                    double fallback, double low, double high, bool open_low) {
  auto field = map.get(key);
  if (!field) return fallback;
  double value = read_number(*field, source);
  bool ok = (open_low ? value > low : value >= low) && value < high;
  if (!ok)
    throw source.error(field->path, "expected a number in " + std::string(open_low ? "(" : "[") +
                                        std::to_string(low) + ", " + std::to_string(high) +
                                        "), got " + describe_node(field->node));
  return value;
}

void refuse_unless(const MapFields& map, const SourceMap& source, const std::string& kind,
                   const std::string& wanted, std::initializer_list<const char*> keys) {
  if (kind == wanted) return;
  for (const char* key : keys)
    if (auto field = map.get(key))
      throw source.error(field->path,
                         "not used by optimizer kind " + kind + " (only " + wanted + ")");
}

// A step function name the registry knows; a program that registers its own steps passes its
// registry to parse_experiment, so its names are known here too.
std::string read_step_name(const Field& field, const SourceMap& source,
                           const std::vector<std::string>& known) {
  std::string name = read_string(field, source);
  if (std::find(known.begin(), known.end(), name) != known.end()) return name;
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  throw source.error(field.path, "unknown step function \"" + name + "\" (known: " + list +
                                     "; a program adds its own with ModelRegistry::add_step)");
}

}  // namespace

void read_optimizer(const Field& field, SourceMap& source, proto::OptimizerSpec* out) {
  MapFields opt(field, source,
                {"kind", "learning_rate", "momentum", "nesterov", "beta1", "beta2", "epsilon",
                 "initial_accumulator_value"});
  out->set_kind(read_choice(opt.require("kind"), source, {"sgd", "momentum", "adam", "adagrad"}));
  const std::string& kind = out->kind();
  Field rate = opt.require("learning_rate");
  out->set_learning_rate(read_number(rate, source));
  if (!(out->learning_rate() > 0))
    throw source.error(rate.path, "expected a positive number, got " + describe_node(rate.node));
  refuse_unless(opt, source, kind, "momentum", {"momentum", "nesterov"});
  refuse_unless(opt, source, kind, "adam", {"beta1", "beta2"});
  refuse_unless(opt, source, kind, "adagrad", {"initial_accumulator_value"});
  if (kind != "adam" && kind != "adagrad")
    if (auto eps = opt.get("epsilon"))
      throw source.error(eps->path, "not used by optimizer kind " + kind);
  if (kind == "momentum") {
    out->set_momentum(read_bounded(opt, "momentum", source, 0.9, 0.0, 1.0, false));
    if (auto nesterov = opt.get("nesterov")) out->set_nesterov(read_bool(*nesterov, source));
  } else if (kind == "adam") {
    out->set_beta1(read_bounded(opt, "beta1", source, 0.9, 0.0, 1.0, false));
    out->set_beta2(read_bounded(opt, "beta2", source, 0.999, 0.0, 1.0, false));
    out->set_epsilon(read_bounded(opt, "epsilon", source, 1e-7, 0.0, 1.0, true));
  } else if (kind == "adagrad") {
    out->set_initial_accumulator_value(
        read_bounded(opt, "initial_accumulator_value", source, 0.1, 0.0, 1e30, false));
    out->set_epsilon(read_bounded(opt, "epsilon", source, 1e-7, 0.0, 1.0, true));
  }
}

void read_train(const Field& field, SourceMap& source, const std::vector<std::string>& step_names,
                proto::TrainSpec* out) {
  MapFields train(field, source,
                  {"steps", "log_every", "checkpoint_every", "checkpoint_dir", "keep", "step",
                   "steps_per_execution", "on_nan", "flush_denormals"});
  out->set_steps(read_integer(train.require("steps"), source, 1));
  out->set_step("train_step");
  if (auto step = train.get("step")) out->set_step(read_step_name(*step, source, step_names));
  if (auto spe = train.get("steps_per_execution"))
    out->set_steps_per_execution(read_integer(*spe, source, 1));
  out->set_on_nan("stop");
  if (auto on_nan = train.get("on_nan"))
    out->set_on_nan(read_choice(*on_nan, source, {"stop", "skip_step", "ignore"}));
  if (auto flush = train.get("flush_denormals"))
    out->set_keep_denormals(!read_bool(*flush, source));
  out->set_log_every(kDefaultLogEvery);
  if (auto log = train.get("log_every")) out->set_log_every(read_integer(*log, source, 0));
  if (auto every = train.get("checkpoint_every"))
    out->set_checkpoint_every(read_integer(*every, source, 0));
  if (auto dir = train.get("checkpoint_dir")) out->set_checkpoint_dir(read_string(*dir, source));
  if (auto keep = train.get("keep")) {
    if (out->checkpoint_dir().empty()) throw source.error(keep->path, "keep needs checkpoint_dir");
    out->set_keep(read_integer(*keep, source, 0));
  }
  if (out->checkpoint_every() > 0 && out->checkpoint_dir().empty())
    throw source.error(child_path(train.path(), "checkpoint_every"),
                       "checkpoint_every needs checkpoint_dir (where would they go?)");
}

}  // namespace troupe::experiment
