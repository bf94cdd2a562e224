// Reads tfrecord/csv files into (features, label) examples: see file_examples.hpp.
#include "experiment/run/file_examples.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/data/file_sources.hpp"
#include "core/data/map_rows.hpp"

namespace troupe {
namespace {

template <class T>
void append_as_float(const void* in, int64_t n, float* out) {
  const T* p = static_cast<const T*>(in);
  for (int64_t i = 0; i < n; ++i) out[i] = float(p[i]);
}

// Writes n values of `dtype` at `in` into out as float32.
void write_floats(DType dtype, const void* in, int64_t n, float* out) {
  switch (dtype) {
    case DType::float32: append_as_float<float>(in, n, out); break;
    case DType::float64: append_as_float<double>(in, n, out); break;
    case DType::int32: append_as_float<int32_t>(in, n, out); break;
    case DType::int64: append_as_float<int64_t>(in, n, out); break;
    default:
      throw invalid_argument("data.features: cannot feed " + std::string(dtype_name(dtype)) +
                             " values to a model");
  }
}

// Writes t's elements into out as float32; returns how many.
int64_t write_as_float(const Tensor& t, float* out) {
  if (t.dtype() != DType::float32 && t.dtype() != DType::float64 && t.dtype() != DType::int32 &&
      t.dtype() != DType::int64)
    throw invalid_argument("data.features: cannot feed " + t.description() + " to a model");
  write_floats(t.dtype(), t.raw_data(), t.num_elements(), out);
  return t.num_elements();
}

Tensor to_float32(const Tensor& t) {
  if (t.dtype() == DType::float32) return t;
  Tensor out(DType::float32, t.shape());
  write_as_float(t, out.data<float>());
  return out;
}

// Where one feature sits in a file element: TFRecord gives it as one component of its shape,
// CSV as `count` scalar columns in a row.
struct Slot {
  size_t begin = 0, count = 1;
  DType dtype = DType::float32;
  Shape shape;
};

// What the map needs to know about one file element: which features are inputs, in file order.
struct Layout {
  std::vector<Slot> inputs;
  Slot label;
  int64_t width = 0;  // input elements per example
  bool embedding_ids = false;
  bool float_label = false;
};

// The feature in `slot` as one tensor of its shape (CSV columns copied side by side).
Tensor gather(const data::Element& e, const Slot& slot) {
  if (slot.count == 1) return e[slot.begin].reshape(slot.shape);
  Tensor out(slot.dtype, slot.shape);
  const size_t bytes = dtype_size(slot.dtype);
  char* dst = static_cast<char*>(out.raw_data());
  for (size_t c = 0; c < slot.count; ++c)
    std::memcpy(dst + c * bytes, e[slot.begin + c].raw_data(), bytes);
  return out;
}

data::Element to_example(const data::Element& e, const Layout& layout) {
  Tensor label = gather(e, layout.label);
  if (layout.float_label) label = to_float32(label);
  if (layout.embedding_ids) return {gather(e, layout.inputs.front()), label};
  const Slot& first = layout.inputs.front();
  if (layout.inputs.size() == 1 && first.count == 1 && first.dtype == DType::float32)
    return {e[first.begin].reshape(Shape{layout.width}), label};
  Tensor x(DType::float32, Shape{layout.width});
  float* out = x.data<float>();
  for (const Slot& slot : layout.inputs)
    for (size_t c = 0; c < slot.count; ++c) out += write_as_float(e[slot.begin + c], out);
  return {x, label};
}

// to_example for a TFRecord element given as its features' bytes (one component per feature),
// written into (features, label) memory: what batch() fills its rows through.
void to_example_row(const std::vector<const void*>& in, const data::RowDestination& out,
                    const Layout& layout) {
  const Slot& label = layout.label;
  if (layout.float_label)
    write_floats(label.dtype, in[label.begin], label.shape.num_elements(),
                 static_cast<float*>(out[1]));
  else
    std::memcpy(out[1], in[label.begin],
                size_t(label.shape.num_elements()) * dtype_size(label.dtype));
  if (layout.embedding_ids) {
    const Slot& ids = layout.inputs.front();
    std::memcpy(out[0], in[ids.begin], size_t(ids.shape.num_elements()) * dtype_size(ids.dtype));
    return;
  }
  float* x = static_cast<float*>(out[0]);
  for (const Slot& slot : layout.inputs) {
    write_floats(slot.dtype, in[slot.begin], slot.shape.num_elements(), x);
    x += slot.shape.num_elements();
  }
}

// A directory or an empty file would only surface as "end of sequence" at the first step, with
// no file named: refuse them here, naming the file.
void check_data_file(const std::string& path, size_t index, const std::string& kind) {
  const std::string what = "data.files[" + std::to_string(index) + "]: '" + path + "' ";
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw invalid_argument(what + "is a directory; list the " + kind +
                           " files in it (data.files takes files)");
  if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0)
    throw invalid_argument(what + "is empty (0 bytes): it holds no " + kind + " records");
}

}  // namespace

std::vector<std::string> ordered_feature_names(const proto::DataSpec& data) {
  std::vector<std::string> names(data.feature_order().begin(), data.feature_order().end());
  if (!names.empty()) return names;
  for (const auto& entry : data.features()) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  return names;
}

data::Dataset file_examples(const proto::DataSpec& d, bool embedding_ids, bool float_label) {
  const std::vector<std::string> names = ordered_feature_names(d);
  std::vector<std::string> files(d.files().begin(), d.files().end());
  const bool csv = d.kind() == "csv";
  for (size_t i = 0; i < files.size(); ++i) check_data_file(files[i], i, d.kind());
  Layout layout;
  layout.embedding_ids = embedding_ids;
  layout.float_label = float_label;
  std::vector<data::FeatureSpec> specs;  // TFRecord: one per feature
  data::CsvOptions csv_options;          // CSV: one column per element of each feature
  csv_options.header = d.header();
  for (const auto& name : names) {
    const proto::FeatureSpec& f = d.features().at(name);
    Slot slot;
    slot.dtype = parse_dtype(f.dtype());
    slot.shape = Shape(std::vector<int64_t>(f.shape().begin(), f.shape().end()));
    slot.begin = csv ? csv_options.column_types.size() : specs.size();
    slot.count = csv ? size_t(slot.shape.num_elements()) : 1;
    specs.push_back({name, slot.dtype, slot.shape});
    csv_options.column_types.insert(csv_options.column_types.end(), slot.count, slot.dtype);
    if (name == d.label()) {
      layout.label = slot;
    } else {
      layout.width += slot.shape.num_elements();
      layout.inputs.push_back(slot);
    }
  }
  if (layout.inputs.empty())
    throw invalid_argument("data.features: no feature besides the label '" + d.label() + "'");
  if (embedding_ids && layout.inputs.size() != 1)
    throw invalid_argument("data.features: the embedding model reads one id feature, got " +
                           std::to_string(layout.inputs.size()));
  data::Dataset raw =
      csv ? data::csv_dataset(files, csv_options) : data::tfrecord_dataset(files, specs);
  const auto spec_of = [](const Slot& slot) {
    return data::TensorSpec{slot.dtype, slot.shape.dims()};
  };
  data::TensorSpec label_spec = spec_of(layout.label);
  if (float_label) label_spec.dtype = DType::float32;
  data::TensorSpec input_spec = embedding_ids ? spec_of(layout.inputs.front())
                                              : data::TensorSpec{DType::float32, {layout.width}};
  data::ElementSpec example_spec{input_spec, label_spec};
  if (!csv)  // records decode into batch rows (docs/input.md): no tensor per feature or example
    return data::map_rows(
        raw,
        [layout](const std::vector<const void*>& in, const data::RowDestination& out) {
          to_example_row(in, out, layout);
        },
        example_spec);
  return raw.map([layout](const data::Element& e) { return to_example(e, layout); }, example_spec);
}

}  // namespace troupe
