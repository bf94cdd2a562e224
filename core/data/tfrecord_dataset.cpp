// tfrecord_dataset: tf.train.Example records -> tensors, by feature spec.
#include <unordered_map>

#include "core/data/file_source_node.hpp"
#include "core/data/file_sources.hpp"
#include "core/data/tfrecord.hpp"

namespace troupe::data {
namespace {

class ExampleCursor : public FileCursor {
 public:
  ExampleCursor(const std::string& path, const std::vector<FeatureSpec>& specs)
      : reader_(path), specs_(specs) {
    for (size_t i = 0; i < specs_.size(); ++i) index_.emplace(specs_[i].name, i);
  }
  std::optional<Element> next() override {
    uint64_t at = reader_.offset();
    if (!read_features()) return std::nullopt;
    Element out;
    for (size_t i = 0; i < specs_.size(); ++i) {
      Tensor t(specs_[i].dtype, specs_[i].shape);
      extract(specs_[i], found_[i], at, t.raw_data());
      out.push_back(std::move(t));
    }
    ++record_;
    return out;
  }
  // The record's values decoded straight into the batch's rows: no tensor per feature.
  bool fill_next(const RowDestination& dst) override {
    uint64_t at = reader_.offset();
    if (!read_features()) return false;
    for (size_t i = 0; i < specs_.size(); ++i) extract(specs_[i], found_[i], at, dst[i]);
    ++record_;
    return true;
  }
  uint64_t offset() const override { return reader_.offset(); }
  void seek(uint64_t offset) override {
    // Record numbers in messages count from the start of the file, so re-count them.
    reader_.seek(0);
    record_ = 0;
    while (reader_.offset() < offset && reader_.next()) ++record_;
    if (reader_.offset() != offset)
      throw data_loss("iterator state: byte offset " + std::to_string(offset) +
                      " is not a record boundary of TFRecord file '" + reader_.path() + "'");
  }

 private:
  // Frames the next record and finds the spec'd features in it (views into the record, valid
  // until the next read); false at the end of the file.
  bool read_features() {
    uint64_t at = reader_.offset();
    auto record = reader_.next();
    if (!record) return false;
    found_.assign(specs_.size(), FeatureView{});
    try {
      for_each_feature(*record, [&](std::string_view name, const FeatureView& v) {
        auto it = index_.find(name);
        if (it != index_.end()) found_[it->second] = v;
      });
    } catch (const Error& e) {
      throw Error(e.code(), where(at) + ": " + e.what());
    }
    return true;
  }
  std::string where(uint64_t at) const {
    return "record " + std::to_string(record_) + " (byte offset " + std::to_string(at) +
           ") of TFRecord file '" + reader_.path() + "'";
  }
  // Checks one feature against its spec and writes its values to `out` (spec.shape elements).
  void extract(const FeatureSpec& spec, const FeatureView& v, uint64_t at, void* out) const {
    if (v.kind == FeatureKind::none)
      throw invalid_argument("feature '" + spec.name + "' is missing in " + where(at));
    FeatureKind want =
        spec.dtype == DType::float32 ? FeatureKind::float_list : FeatureKind::int64_list;
    if (v.kind != want)
      throw invalid_argument("feature '" + spec.name + "' in " + where(at) + " is a " +
                             std::string(feature_kind_name(v.kind)) + ", the spec wants " +
                             std::string(dtype_name(spec.dtype)) + " (" +
                             std::string(feature_kind_name(want)) + ")");
    size_t n = v.size();
    if (int64_t(n) != spec.shape.num_elements())
      throw invalid_argument("feature '" + spec.name + "' in " + where(at) + " has " +
                             std::to_string(n) + " values, the spec shape " +
                             spec.shape.to_string() + " needs " +
                             std::to_string(spec.shape.num_elements()));
    if (spec.dtype == DType::float32)
      v.copy_floats(static_cast<float*>(out));
    else
      v.copy_int64s(static_cast<int64_t*>(out));
  }

  TFRecordReader reader_;
  const std::vector<FeatureSpec>& specs_;
  std::unordered_map<std::string_view, size_t> index_;
  std::vector<FeatureView> found_;
  int64_t record_ = 0;
};

class TFRecordNode : public FileSourceNode {
 public:
  TFRecordNode(std::vector<std::string> files, std::vector<FeatureSpec> specs)
      : FileSourceNode("tfrecord", std::move(files), spec_for(specs)), specs_(std::move(specs)) {}
  std::unique_ptr<FileCursor> open(size_t index) const override {
    return std::make_unique<ExampleCursor>(files()->at(index), specs_);
  }
  bool cursors_fill_rows() const override { return true; }
  NodePtr with_files(std::vector<std::string> files) const override {
    return std::make_shared<TFRecordNode>(std::move(files), specs_);
  }

 private:
  static ElementSpec spec_for(const std::vector<FeatureSpec>& specs) {
    ElementSpec out;
    for (const auto& s : specs) out.push_back({s.dtype, s.shape.dims()});
    return out;
  }
  std::vector<FeatureSpec> specs_;
};

}  // namespace

Dataset tfrecord_dataset(std::vector<std::string> files, std::vector<FeatureSpec> features) {
  if (features.empty()) throw invalid_argument("tfrecord_dataset: empty feature spec");
  for (const auto& f : features)
    if (f.dtype != DType::float32 && f.dtype != DType::int64)
      throw invalid_argument("tfrecord_dataset: feature '" + f.name + "' has dtype " +
                             std::string(dtype_name(f.dtype)) +
                             "; tf.train.Example holds float32 or int64");
  return Dataset(std::make_shared<TFRecordNode>(std::move(files), std::move(features)));
}

void write_examples(const std::string& path, const std::vector<Example>& examples) {
  TFRecordWriter writer(path);
  for (const auto& e : examples) writer.write(encode_example(e));
  writer.close();
}

}  // namespace troupe::data
