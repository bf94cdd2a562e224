// Readers for the `strategy` and `model` sections of an experiment file.
#include <set>

#include "core/collective/algorithm_choice.hpp"
#include "core/device_spec.hpp"
#include "experiment/default_cross_device_op.hpp"
#include "experiment/experiment_sections.hpp"

namespace troupe::experiment {
namespace {

void read_cross_device_ops(const Field& field, SourceMap& source, proto::CrossDeviceOps* out) {
  MapFields ops(field, source, {"kind", "num_packs", "bytes_per_pack"});
  out->set_kind(read_choice(ops.require("kind"), source,
                            {std::begin(kCrossDeviceOpNames), std::end(kCrossDeviceOpNames)}));
  out->set_num_packs(1);
  if (auto packs = ops.get("num_packs")) {
    int64_t n = read_integer(*packs, source, 0);
    if (n > INT32_MAX) throw source.error(packs->path, "too large: " + std::to_string(n));
    out->set_num_packs(int32_t(n));
  }
  if (auto bytes = ops.get("bytes_per_pack"))
    out->set_bytes_per_pack(read_integer(*bytes, source, 0));
}

void read_communication(const Field& field, SourceMap& source, proto::Communication* out) {
  MapFields c(field, source, {"implementation", "bytes_per_pack", "timeout_ms", "cross_memory"});
  out->set_implementation("auto");
  out->set_cross_memory("auto");
  if (auto impl = c.get("implementation"))
    out->set_implementation(read_choice(*impl, source, {"auto", "ring", "nccl"}));
  if (auto bytes = c.get("bytes_per_pack"))
    out->set_bytes_per_pack(read_integer(*bytes, source, 0));
  if (auto timeout = c.get("timeout_ms")) out->set_timeout_ms(read_integer(*timeout, source, 1));
  if (auto cross = c.get("cross_memory"))
    out->set_cross_memory(read_choice(*cross, source, {"auto", "on", "off"}));
}

void read_devices(const Field& field, SourceMap& source, proto::StrategySpec* out) {
  std::set<std::string> seen;
  for (const auto& item : read_list(field, source)) {
    std::string text = read_string(item, source);
    std::string canonical;
    try {
      canonical = canonicalize(text);
    } catch (const Error& e) {
      throw source.error(item.path, std::string("bad device: ") + e.what());
    }
    if (!seen.insert(canonical).second)
      throw source.error(item.path, "duplicate device \"" + text + "\" (" + canonical + ")");
    out->add_devices(text);
  }
}

int64_t read_size(const MapFields& map, const std::string& key, SourceMap& source) {
  return read_integer(map.require(key), source, 1);
}

// Keys that only some model kinds accept: naming the kind in the error says what to change.
void refuse_keys(const MapFields& model, const SourceMap& source, const std::string& kind,
                 std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (auto field = model.get(key))
      throw source.error(field->path, "not used by model kind " + kind);
}

}  // namespace

void read_strategy(const Field& field, SourceMap& source, proto::StrategySpec* out) {
  MapFields strategy(
      field, source,
      {"kind", "devices", "cross_device_ops", "communication", "num_ps", "workers", "partitioner",
       "placement", "mode", "replicas_to_aggregate", "total_num_replicas", "replication"});
  out->set_kind(read_choice(
      strategy.require("kind"), source,
      {"mirrored", "multi_worker_mirrored", "one_device", "default", "parameter_server"}));
  read_parameter_server(strategy, source, out);
  if (auto communication = strategy.get("communication")) {
    if (out->kind() != "multi_worker_mirrored")
      throw source.error(communication->path,
                         "only multi_worker_mirrored communicates across workers (strategy.kind "
                         "is " +
                             out->kind() + ")");
    read_communication(*communication, source, out->mutable_communication());
  } else if (out->kind() == "multi_worker_mirrored") {
    out->mutable_communication()->set_implementation("auto");
  }
  auto devices = strategy.get("devices");
  if (devices) read_devices(*devices, source, out);
  if (out->kind() == "default" && devices)
    throw source.error(devices->path,
                       "the default strategy places everything on CPU:0; "
                       "remove devices or use kind mirrored");
  if (out->kind() == "one_device" && devices && out->devices_size() != 1)
    throw source.error(devices->path, "one_device needs exactly one device, got " +
                                          std::to_string(out->devices_size()));
  if (devices && out->devices_size() == 0)
    throw source.error(devices->path, "expected at least one device");
  if (out->devices_size() == 0) out->add_devices("CPU:0");
  if (auto ops = strategy.get("cross_device_ops")) {
    if (out->kind() == "multi_worker_mirrored")
      throw source.error(ops->path,
                         "multi_worker_mirrored reduces through strategy.communication "
                         "(implementation, bytes_per_pack, timeout_ms), not cross_device_ops");
    if (out->kind() != "mirrored")
      throw source.error(ops->path, "only the mirrored strategy reduces across devices");
    read_cross_device_ops(*ops, source, out->mutable_cross_device_ops());
  } else if (out->kind() == "mirrored") {
    out->mutable_cross_device_ops()->set_kind(default_cross_device_op(
        std::vector<std::string>(out->devices().begin(), out->devices().end())));
    out->mutable_cross_device_ops()->set_num_packs(1);
  }
}

void read_model(const Field& field, SourceMap& source, proto::ModelSpec* out) {
  MapFields model(field, source,
                  {"kind", "input_dim", "hidden", "classes", "activation", "units", "num_users",
                   "num_items", "embedding_dim"});
  out->set_kind(
      read_choice(model.require("kind"), source, {"linear", "softmax", "mlp", "embedding"}));
  const std::string& kind = out->kind();
  if (kind != "mlp") refuse_keys(model, source, kind, {"hidden", "activation"});
  if (kind != "linear") refuse_keys(model, source, kind, {"units"});
  if (kind == "linear" || kind == "embedding") refuse_keys(model, source, kind, {"classes"});
  if (kind == "embedding") {
    refuse_keys(model, source, kind, {"input_dim"});
    out->set_num_users(read_size(model, "num_users", source));
    out->set_num_items(read_size(model, "num_items", source));
    out->set_embedding_dim(read_size(model, "embedding_dim", source));
    return;
  }
  refuse_keys(model, source, kind, {"num_users", "num_items", "embedding_dim"});
  out->set_input_dim(read_size(model, "input_dim", source));
  if (kind == "linear") {
    out->set_units(1);
    if (auto units = model.get("units")) out->set_units(read_integer(*units, source, 1));
    return;
  }
  Field classes = model.require("classes");
  out->set_classes(read_integer(classes, source, INT64_MIN));
  if (out->classes() < 2)
    throw source.error(classes.path, "a classifier needs at least 2 classes, got " +
                                         std::to_string(out->classes()));
  if (kind != "mlp") return;
  auto layers = read_list(model.require("hidden"), source);
  if (layers.empty())
    throw source.error(child_path(model.path(), "hidden"), "an mlp needs at least one layer");
  for (const auto& layer : layers) out->add_hidden(read_integer(layer, source, 1));
  out->set_activation("relu");
  if (auto activation = model.get("activation"))
    out->set_activation(read_choice(*activation, source, {"relu"}));
}

}  // namespace troupe::experiment
