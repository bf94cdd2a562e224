#include "core/ps/sharded_index.hpp"

#include <algorithm>
#include <string>

#include "core/ps/integer_math.hpp"
#include "core/status.hpp"

namespace troupe {
namespace {

int64_t dim0_of(const std::vector<int64_t>& offsets) {
  if (offsets.size() < 2) throw invalid_argument("a sharded variable needs at least one shard");
  return offsets.back();
}

// Python's slice.indices(dim): defaults, negative bounds counted from the end, then clamped.
// For a negative step, -1 means "before row 0".
struct Normalised {
  int64_t start, stop, step;
};

Normalised normalise(const SliceSpec& s, int64_t dim) {
  const int64_t step = s.step.value_or(1);
  if (step == 0) throw invalid_argument("slice step cannot be zero");
  const int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? dim : dim - 1;
  auto bound = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t x = *v < 0 ? *v + dim : *v;
    return std::clamp(x, lower, upper);
  };
  return {bound(s.start, step > 0 ? 0 : dim - 1), bound(s.stop, step > 0 ? dim : -1), step};
}

}  // namespace

ShardRow locate_row(int64_t index, const std::vector<int64_t>& offsets) {
  const int64_t dim = dim0_of(offsets);
  const int64_t s = index < 0 ? index + dim : index;
  if (s < 0 || s >= dim)
    throw out_of_range("index " + std::to_string(index) +
                       " is out of bounds for axis 0 with size " + std::to_string(dim));
  // Half-open [offset_i, offset_{i+1}) (erratum: TF compares s > offset_i).
  auto it = std::upper_bound(offsets.begin(), offsets.end() - 1, s);
  // Skip empty shards: upper_bound lands after every shard starting at or before s.
  const int64_t shard = int64_t(it - offsets.begin()) - 1;
  return {shard, s - offsets[size_t(shard)]};
}

std::vector<std::optional<LocalSlice>> decompose_slice(const SliceSpec& slice,
                                                       const std::vector<int64_t>& offsets) {
  const int64_t dim = dim0_of(offsets);
  const Normalised n = normalise(slice, dim);
  const size_t shards = offsets.size() - 1;
  std::vector<std::optional<LocalSlice>> out(shards);
  int64_t cur = n.start;
  if (n.step > 0) {
    for (size_t i = 0; i < shards; ++i) {
      const int64_t vs = offsets[i], ve = offsets[i + 1];
      if (cur < vs) cur += n.step * ceil_div(vs - cur, n.step);
      if (cur >= ve || cur >= n.stop) continue;
      out[i] = LocalSlice{cur - vs, std::min(n.stop, ve) - vs, n.step};
    }
  } else {
    for (size_t k = shards; k-- > 0;) {
      const int64_t vs = offsets[k], ve = offsets[k + 1];
      if (cur >= ve) cur += n.step * ceil_div(ve - cur - 1, n.step);
      if (cur < vs || cur <= n.stop) continue;
      std::optional<int64_t> end;
      if (n.stop >= vs) end = n.stop - vs;
      out[k] = LocalSlice{cur - vs, end, n.step};
    }
  }
  return out;
}

std::vector<int64_t> local_rows(const LocalSlice& s, int64_t rows) {
  std::vector<int64_t> out;
  if (s.step > 0) {
    const int64_t stop = std::min(s.stop.value_or(rows), rows);
    for (int64_t r = s.start; r < stop; r += s.step) out.push_back(r);
  } else {
    const int64_t stop = s.stop.value_or(-1);
    for (int64_t r = std::min(s.start, rows - 1); r > stop && r >= 0; r += s.step) out.push_back(r);
  }
  return out;
}

std::vector<ShardRow> slice_rows(const SliceSpec& slice, const std::vector<int64_t>& offsets) {
  auto parts = decompose_slice(slice, offsets);
  std::vector<ShardRow> out;
  auto add = [&](size_t i) {
    if (!parts[i]) return;
    for (int64_t r : local_rows(*parts[i], offsets[i + 1] - offsets[i]))
      out.push_back({int64_t(i), r});
  };
  if (slice.step.value_or(1) > 0) {
    for (size_t i = 0; i < parts.size(); ++i) add(i);
  } else {
    for (size_t i = parts.size(); i-- > 0;) add(i);
  }
  return out;
}

}  // namespace troupe
