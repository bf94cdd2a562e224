#include "core/data/file_source_node.hpp"

namespace troupe::data {

bool FileCursor::fill_next(const RowDestination&) {
  throw unimplemented("this file reader cannot write records into batch rows");
}

namespace {

class FileSourceIterator : public IteratorBase {
 public:
  explicit FileSourceIterator(std::shared_ptr<const FileSourceNode> node)
      : node_(std::move(node)) {}
  std::optional<Element> next() override {
    const auto& files = *node_->files();
    while (file_ < files.size()) {
      if (!cursor_) cursor_ = node_->open(file_);
      if (auto e = cursor_->next()) return e;
      cursor_.reset();
      ++file_;
    }
    return std::nullopt;
  }
  bool fills_rows() const override { return node_->cursors_fill_rows(); }
  bool fill_next(const RowDestination& dst) override {
    const auto& files = *node_->files();
    while (file_ < files.size()) {
      if (!cursor_) cursor_ = node_->open(file_);
      if (cursor_->fill_next(dst)) return true;
      cursor_.reset();
      ++file_;
    }
    return false;
  }
  void save(StateWriter& w) const override {
    w.tag(node_->name());
    w.u64(file_);
    w.u64(cursor_ ? cursor_->offset() : 0);
  }
  void restore(StateReader& r) override {
    r.expect_tag(node_->name());
    uint64_t file = r.u64(), offset = r.u64();
    if (file > node_->files()->size())
      throw data_loss("iterator state: file index " + std::to_string(file) + " but '" +
                      node_->name() + "' reads " + std::to_string(node_->files()->size()) +
                      " file(s)");
    file_ = size_t(file);
    cursor_.reset();
    if (file_ < node_->files()->size() && offset > 0) {
      cursor_ = node_->open(file_);
      cursor_->seek(offset);
    }
  }

 private:
  std::shared_ptr<const FileSourceNode> node_;
  size_t file_ = 0;
  std::unique_ptr<FileCursor> cursor_;
};

}  // namespace

std::unique_ptr<IteratorBase> FileSourceNode::make_iterator(const IteratorContext&) const {
  return std::make_unique<FileSourceIterator>(shared_from_this());
}

}  // namespace troupe::data
