#pragma once
// Inputs whose all-reduce has a closed form: rank r contributes x[i] = (r + 1) * (i % 97 + 1) - r.
// Shared by the in-process and multi-process collective tests and by `troupe collective-peer`,
// so every transport is checked against the same arithmetic.

#include <cstdint>

#include "core/tensor.hpp"

namespace troupe {

/// Rank r's input of `count` elements.
Tensor closed_form_input(int rank, int64_t count, DType dtype);
/// Element i of the SUM over `group_size` ranks.
double closed_form_sum(int group_size, int64_t i);
/// Sum over all elements of the SUM result (what a checksum of the result must equal).
double closed_form_total(int group_size, int64_t count);

}  // namespace troupe
