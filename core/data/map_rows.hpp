#pragma once
// map_rows: a map written as "input bytes -> output memory", so that batch() can fill rows
// through it (the input is written into one reused scratch row, the output straight into the
// batch). Used where a per-example conversion sits between a file source and batch() (`troupe
// run` casting and concatenating TFRecord features).

#include <functional>
#include <vector>

#include "core/data/dataset.hpp"

namespace troupe::data {

/// in[c]: the bytes of input component c (its spec's shape and dtype); out[c]: room for output
/// component c. Must write every output byte and depend on nothing but `in`.
using RowMapFn = std::function<void(const std::vector<const void*>& in, const RowDestination& out)>;

/// Applies fn to every element of `input`, producing elements of `output_spec`. Both specs must
/// be fully defined (invalid_argument naming the spec otherwise); an input element that does
/// not match its spec is refused naming the component.
Dataset map_rows(const Dataset& input, RowMapFn fn, ElementSpec output_spec);

}  // namespace troupe::data
