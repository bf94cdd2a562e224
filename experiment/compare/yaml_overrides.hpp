#pragma once
// Applying a variant's overrides to the base experiment's YAML tree (internal to compare/).
// Mappings merge key by key, anything else replaces, and `~` (null) deletes the key, so a variant
// can drop a key the base sets (`cross_device_ops: ~` when it switches to multi_worker_mirrored).
// The nodes keep their marks, so an error about an overridden key points into the compare
// section and one about an inherited key into the base.

#include <yaml-cpp/yaml.h>

namespace troupe::experiment {

/// Merges `overrides` (a mapping) into `base` (a mapping) in place.
void apply_overrides(YAML::Node base, const YAML::Node& overrides);

}  // namespace troupe::experiment
