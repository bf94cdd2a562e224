// csv_dataset: one element of scalars per CSV row.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/data/file_source_node.hpp"
#include "core/data/file_sources.hpp"

namespace troupe::data {
namespace {

Tensor parse_cell(const std::string& cell, DType dtype, const std::string& where) {
  const char* s = cell.c_str();
  char* end = nullptr;
  errno = 0;
  Tensor t;
  switch (dtype) {
    case DType::float32: t = Tensor::from_scalar<float>(std::strtof(s, &end)); break;
    case DType::float64: t = Tensor::from_scalar<double>(std::strtod(s, &end)); break;
    case DType::int32: {
      long long v = std::strtoll(s, &end, 10);
      if (v < INT32_MIN || v > INT32_MAX) errno = ERANGE;
      t = Tensor::from_scalar<int32_t>(int32_t(v));
      break;
    }
    case DType::int64: t = Tensor::from_scalar<int64_t>(std::strtoll(s, &end, 10)); break;
  }
  while (end && (*end == ' ' || *end == '\t')) ++end;
  if (cell.empty() || end == s || *end != '\0' || errno == ERANGE)
    throw invalid_argument(where + ": '" + cell + "' is not a valid " +
                           std::string(dtype_name(dtype)));
  return t;
}

class CsvCursor : public FileCursor {
 public:
  CsvCursor(std::string path, const CsvOptions& options)
      : path_(std::move(path)), options_(options) {
    in_.open(path_, std::ios::binary);
    if (!in_) throw not_found("CSV file '" + path_ + "': cannot open: " + std::strerror(errno));
    if (options_.header) read_line();
  }
  std::optional<Element> next() override {
    std::string line;
    do {
      auto l = read_line();
      if (!l) return std::nullopt;
      line = std::move(*l);
    } while (line.empty());  // blank lines (and a trailing newline) are not rows
    std::vector<std::string> cells;
    size_t start = 0;
    for (;;) {
      size_t d = line.find(options_.delimiter, start);
      cells.push_back(line.substr(start, d == std::string::npos ? std::string::npos : d - start));
      if (d == std::string::npos) break;
      start = d + 1;
    }
    std::string where = path_ + ":" + std::to_string(line_);
    if (cells.size() != options_.column_types.size())
      throw invalid_argument(where + ": expected " + std::to_string(options_.column_types.size()) +
                             " columns, found " + std::to_string(cells.size()));
    Element out;
    for (size_t c = 0; c < cells.size(); ++c)
      out.push_back(parse_cell(cells[c], options_.column_types[c],
                               where + ": column " + std::to_string(c + 1)));
    return out;
  }
  uint64_t offset() const override { return offset_; }
  void seek(uint64_t offset) override {
    // Re-read up to the offset so line numbers in messages stay right.
    in_.clear();
    in_.seekg(0);
    offset_ = 0;
    line_ = 0;
    while (offset_ < offset && read_line()) {
    }
    if (offset_ != offset)
      throw data_loss("iterator state: byte offset " + std::to_string(offset) +
                      " is not a line boundary of CSV file '" + path_ + "'");
  }

 private:
  std::optional<std::string> read_line() {
    std::string line;
    if (!std::getline(in_, line)) return std::nullopt;
    offset_ += line.size() + (in_.eof() ? 0 : 1);
    ++line_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
  }

  std::string path_;
  const CsvOptions& options_;
  std::ifstream in_;
  uint64_t offset_ = 0;
  int64_t line_ = 0;
};

class CsvNode : public FileSourceNode {
 public:
  CsvNode(std::vector<std::string> files, CsvOptions options)
      : FileSourceNode("csv", std::move(files), spec_for(options)), options_(std::move(options)) {}
  std::unique_ptr<FileCursor> open(size_t index) const override {
    return std::make_unique<CsvCursor>(files()->at(index), options_);
  }
  NodePtr with_files(std::vector<std::string> files) const override {
    return std::make_shared<CsvNode>(std::move(files), options_);
  }

 private:
  static ElementSpec spec_for(const CsvOptions& o) {
    ElementSpec out;
    for (auto t : o.column_types) out.push_back({t, {}});
    return out;
  }
  CsvOptions options_;
};

}  // namespace

Dataset csv_dataset(std::vector<std::string> files, CsvOptions options) {
  if (options.column_types.empty()) throw invalid_argument("csv_dataset: no column types given");
  return Dataset(std::make_shared<CsvNode>(std::move(files), std::move(options)));
}

}  // namespace troupe::data
