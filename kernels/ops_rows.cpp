// Ops: gather_rows and the scatter_*_rows family.

#include "kernels/ops.hpp"
#include "kernels/ops_checks.hpp"

namespace troupe {

namespace {
// Shape of `n` rows of `table`: [n, table.shape[1:]].
Shape rows_of(const Tensor& table, int64_t n) { return table.shape().with_leading(n); }

void check_table(const char* op, const char* name, const Tensor& table) {
  if (table.shape().rank() < 1)
    throw invalid_argument(std::string(op) + ": " + name + " " + table.description() +
                           " must have rank >= 1");
}
}  // namespace

void Ops::gather_rows(const Tensor& params, const Tensor& indices, Tensor& out) const {
  const char* op = "gather_rows";
  auto device = checks::common_device(op, {{"params", params}, {"indices", indices}, {"out", out}});
  check_table(op, "params", params);
  checks::rank_is(op, {"indices", indices}, 1);
  checks::is_index(op, {"indices", indices});
  checks::same_dtype(op, {"params", params}, {"out", out});
  checks::shape_is(op, {"out", out}, rows_of(params, indices.num_elements()),
                   "for params " + params.description() + " and indices " + indices.description());
  RowIndexArgs x;
  x.dtype = params.dtype(), x.index_dtype = indices.dtype();
  x.num_indices = indices.num_elements(), x.row_elements = params.shape().row_elements();
  x.table_rows = params.shape()[0], x.indices = indices.raw_data();
  x.table = const_cast<void*>(params.raw_data());  // read-only for gather
  x.out = out.raw_data(), x.ctx = gpu_;
  kernel<RowIndexArgs>(op, device, params.dtype())(x);
}

Tensor Ops::gather_rows(const Tensor& params, const Tensor& indices) const {
  if (!params.defined() || !indices.defined())
    throw invalid_argument("gather_rows: params and indices must be defined tensors");
  check_table("gather_rows", "params", params);
  Tensor out(params.dtype(), rows_of(params, indices.num_elements()));
  gather_rows(params, indices, out);
  return out;
}

void Ops::scatter_add_rows(const Tensor& indices, const Tensor& updates, Tensor& target) const {
  scatter_rows("scatter_add_rows", indices, updates, target);
}

void Ops::scatter_sub_rows(const Tensor& indices, const Tensor& updates, Tensor& target) const {
  scatter_rows("scatter_sub_rows", indices, updates, target);
}

void Ops::scatter_update_rows(const Tensor& indices, const Tensor& updates, Tensor& target) const {
  scatter_rows("scatter_update_rows", indices, updates, target);
}

void Ops::scatter_rows(const char* op, const Tensor& indices, const Tensor& updates,
                       Tensor& target) const {
  auto device =
      checks::common_device(op, {{"indices", indices}, {"updates", updates}, {"target", target}});
  check_table(op, "target", target);
  checks::rank_is(op, {"indices", indices}, 1);
  checks::is_index(op, {"indices", indices});
  checks::same_dtype(op, {"updates", updates}, {"target", target});
  checks::shape_is(op, {"updates", updates}, rows_of(target, indices.num_elements()),
                   "for target " + target.description() + " and indices " + indices.description());
  RowIndexArgs x;
  x.dtype = target.dtype(), x.index_dtype = indices.dtype();
  x.num_indices = indices.num_elements(), x.row_elements = target.shape().row_elements();
  x.table_rows = target.shape()[0], x.indices = indices.raw_data();
  x.table = target.raw_data(), x.updates = updates.raw_data(), x.ctx = gpu_;
  kernel<RowIndexArgs>(op, device, target.dtype())(x);
}

}  // namespace troupe
