#pragma once
// File-reading sources: TFRecord files of tf.train.Example records, and CSV files. Both are
// "reader" sources for FILE auto-sharding (each worker reads a subset of the files), and their
// saved position is (file index, byte offset).

#include <string>
#include <vector>

#include "core/data/dataset.hpp"
#include "core/data/example_proto.hpp"

namespace troupe::data {

/// One feature to extract from each Example: dtype float32 or int64, and a fully known shape
/// (the record must hold exactly shape.num_elements() values).
struct FeatureSpec {
  std::string name;
  DType dtype = DType::float32;
  Shape shape;
};

/// Elements (one tensor per spec, in spec order) from tf.train.Example records in TFRecord files,
/// read in file order. A missing feature, wrong list type or wrong value count throws
/// invalid_argument naming the feature, the record number and the file; corrupt framing throws
/// data_loss naming the file and byte offset.
Dataset tfrecord_dataset(std::vector<std::string> files, std::vector<FeatureSpec> features);

/// Writes tf.train.Example records to a TFRecord file.
void write_examples(const std::string& path, const std::vector<Example>& examples);

/// How to read a CSV file.
struct CsvOptions {
  /// One dtype per column; each element is one scalar tensor per column.
  std::vector<DType> column_types;
  /// Skip the first line of every file.
  bool header = false;
  char delimiter = ',';
};

/// Rows of CSV files as elements of scalars. A row with the wrong number of columns or an
/// unparsable value throws invalid_argument naming file:line (and the column).
Dataset csv_dataset(std::vector<std::string> files, CsvOptions options);

}  // namespace troupe::data
