#include "experiment/compare/yaml_overrides.hpp"

#include <string>

namespace troupe::experiment {

void apply_overrides(YAML::Node base, const YAML::Node& overrides) {
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    const std::string key = it->first.Scalar();
    const YAML::Node value = it->second;  // a copy: the iterator yields a temporary pair
    if (value.IsNull()) {
      base.remove(key);
      continue;
    }
    // The const operator[] inserts nothing; a missing key reads as an invalid node.
    const YAML::Node& lookup = base;
    const YAML::Node existing = lookup[key];
    if (existing.IsDefined() && existing.IsMap() && value.IsMap()) {
      apply_overrides(base[key], value);
      continue;
    }
    // A replaced key keeps the override's key node too, so "unknown key" points at the override.
    base.remove(key);
    base.force_insert(it->first, value);
  }
}

}  // namespace troupe::experiment
