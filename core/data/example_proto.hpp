#pragma once
// tf.train.Example in protobuf wire format, parsed and written by hand (core/ links no
// libprotobuf). The parser is zero-copy: it hands out views into the record, and numeric lists
// are decoded straight into the caller's memory (a packed FloatList is one memcpy).
// Schema: messages/proto/example.proto.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::data {

/// Which list a Feature holds (tf.train.Feature's oneof).
enum class FeatureKind { none = 0, bytes_list = 1, float_list = 2, int64_list = 3 };
/// "bytes_list", "float_list", "int64_list", "none".
std::string_view feature_kind_name(FeatureKind kind);

/// An owning tf.train.Feature (for writing and for tests).
struct Feature {
  FeatureKind kind = FeatureKind::none;
  std::vector<std::string> bytes;
  std::vector<float> floats;
  std::vector<int64_t> int64s;

  static Feature of_floats(std::vector<float> v) {
    return {FeatureKind::float_list, {}, std::move(v), {}};
  }
  static Feature of_int64s(std::vector<int64_t> v) {
    return {FeatureKind::int64_list, {}, {}, std::move(v)};
  }
  static Feature of_bytes(std::vector<std::string> v) {
    return {FeatureKind::bytes_list, std::move(v), {}, {}};
  }
  bool operator==(const Feature& o) const {
    return kind == o.kind && bytes == o.bytes && floats == o.floats && int64s == o.int64s;
  }
};

/// An owning tf.train.Example: feature name -> Feature.
using Example = std::map<std::string, Feature>;

/// A feature inside a parsed record: its kind and the bytes of its XList message (a view).
struct FeatureView {
  FeatureKind kind = FeatureKind::none;
  std::string_view list;

  /// Number of values in the list.
  size_t size() const;
  /// Decodes a float_list into out[0, size()).
  void copy_floats(float* out) const;
  /// Decodes an int64_list into out[0, size()).
  void copy_int64s(int64_t* out) const;
  /// Views of a bytes_list's values.
  std::vector<std::string_view> bytes() const;
};

/// Calls fn(name, feature) for each entry of the record's Features map, in wire order (a later
/// duplicate name overrides an earlier one, as protobuf maps do). Throws data_loss naming the
/// problem on malformed bytes.
void for_each_feature(std::string_view record,
                      const std::function<void(std::string_view, const FeatureView&)>& fn);

/// Serializes an Example (features in name order, numeric lists packed).
std::string encode_example(const Example& example);
/// Parses a serialized Example into owning form.
Example decode_example(std::string_view record);

}  // namespace troupe::data
