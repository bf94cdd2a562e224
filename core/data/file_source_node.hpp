#pragma once
// Shared shape of the file-reading sources (internal): a list of files read one after another,
// with the position kept as (file index, byte offset into it).

#include <memory>
#include <string>
#include <vector>

#include "core/data/node_helpers.hpp"

namespace troupe::data {

/// Reads the records of one open file.
class FileCursor {
 public:
  virtual ~FileCursor() = default;
  /// The next element of this file, or nullopt at its end.
  virtual std::optional<Element> next() = 0;
  /// The next element written into batch rows (IteratorBase::fill_next), false at the end of
  /// this file; only called when the node's cursors_fill_rows().
  virtual bool fill_next(const RowDestination& dst);
  /// Byte offset of the next record.
  virtual uint64_t offset() const = 0;
  virtual void seek(uint64_t offset) = 0;
};

/// A source node over files; subclasses open a cursor per file. Must be owned by a shared_ptr:
/// its iterators keep it alive (cursors refer to its options).
class FileSourceNode : public DatasetNode, public std::enable_shared_from_this<FileSourceNode> {
 public:
  FileSourceNode(std::string name, std::vector<std::string> files, ElementSpec spec)
      : name_(std::move(name)), files_(std::move(files)), spec_(std::move(spec)) {}
  std::string name() const override { return name_; }
  ElementSpec element_spec() const override { return spec_; }
  int64_t cardinality() const override { return files_.empty() ? 0 : kUnknownCardinality; }
  const std::vector<std::string>* files() const override { return &files_; }
  int64_t batch_size_walk() const override { return kNoBatchFound; }
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const override;
  /// Opens file `index` of files() positioned at its first record.
  virtual std::unique_ptr<FileCursor> open(size_t index) const = 0;
  /// True when the cursors write records straight into batch rows (FileCursor::fill_next).
  virtual bool cursors_fill_rows() const { return false; }

 private:
  std::string name_;
  std::vector<std::string> files_;
  ElementSpec spec_;
};

}  // namespace troupe::data
