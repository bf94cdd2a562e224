// Ops: element-wise operations and reductions.

#include "kernels/ops.hpp"
#include "kernels/ops_checks.hpp"

namespace troupe {

using checks::Arg;

Ops::Ops(const KernelRegistry& registry, DeviceContext gpu) : registry_(&registry), gpu_(gpu) {}

namespace {
ElementwiseArgs elementwise(const Tensor& out, DeviceContext ctx) {
  ElementwiseArgs x;
  x.dtype = out.dtype();
  x.count = out.num_elements();
  x.ctx = ctx;
  return x;
}
}  // namespace

void Ops::add(const Tensor& a, const Tensor& b, Tensor& out) const {
  auto device = checks::common_device("add", {{"a", a}, {"b", b}, {"out", out}});
  checks::same_layout("add", {"a", a}, {"b", b});
  checks::same_layout("add", {"a", a}, {"out", out});
  auto x = elementwise(out, gpu_);
  x.a = a.raw_data(), x.b = b.raw_data(), x.out = out.raw_data();
  kernel<ElementwiseArgs>("add", device, out.dtype())(x);
}

void Ops::sub(const Tensor& a, const Tensor& b, Tensor& out) const {
  auto device = checks::common_device("sub", {{"a", a}, {"b", b}, {"out", out}});
  checks::same_layout("sub", {"a", a}, {"b", b});
  checks::same_layout("sub", {"a", a}, {"out", out});
  auto x = elementwise(out, gpu_);
  x.a = a.raw_data(), x.b = b.raw_data(), x.out = out.raw_data();
  kernel<ElementwiseArgs>("sub", device, out.dtype())(x);
}

void Ops::scale(const Tensor& a, double alpha, Tensor& out) const {
  auto device = checks::common_device("scale", {{"a", a}, {"out", out}});
  checks::same_layout("scale", {"a", a}, {"out", out});
  auto x = elementwise(out, gpu_);
  x.a = a.raw_data(), x.out = out.raw_data(), x.alpha = alpha;
  kernel<ElementwiseArgs>("scale", device, out.dtype())(x);
}

void Ops::axpy(double alpha, const Tensor& x_in, Tensor& y) const {
  auto device = checks::common_device("axpy", {{"x", x_in}, {"y", y}});
  checks::same_layout("axpy", {"x", x_in}, {"y", y});
  auto x = elementwise(y, gpu_);
  x.a = x_in.raw_data(), x.out = y.raw_data(), x.alpha = alpha;
  kernel<ElementwiseArgs>("axpy", device, y.dtype())(x);
}

void Ops::fill(Tensor& out, double value) const {
  auto device = checks::common_device("fill", {{"out", out}});
  auto x = elementwise(out, gpu_);
  x.out = out.raw_data(), x.alpha = value;
  kernel<ElementwiseArgs>("fill", device, out.dtype())(x);
}

void Ops::copy(const Tensor& src, Tensor& dst) const {
  auto device = checks::common_device("copy", {{"src", src}, {"dst", dst}});
  checks::same_layout("copy", {"src", src}, {"dst", dst});
  auto x = elementwise(dst, gpu_);
  x.a = src.raw_data(), x.out = dst.raw_data();
  kernel<ElementwiseArgs>("copy", device, dst.dtype())(x);
}

void Ops::relu(const Tensor& features, Tensor& out) const {
  auto device = checks::common_device("relu", {{"features", features}, {"out", out}});
  checks::same_layout("relu", {"features", features}, {"out", out});
  auto x = elementwise(out, gpu_);
  x.a = features.raw_data(), x.out = out.raw_data();
  kernel<ElementwiseArgs>("relu", device, out.dtype())(x);
}

void Ops::relu_grad(const Tensor& gradients, const Tensor& features, Tensor& out) const {
  auto device = checks::common_device(
      "relu_grad", {{"gradients", gradients}, {"features", features}, {"out", out}});
  checks::same_layout("relu_grad", {"gradients", gradients}, {"features", features});
  checks::same_layout("relu_grad", {"gradients", gradients}, {"out", out});
  auto x = elementwise(out, gpu_);
  x.a = gradients.raw_data(), x.b = features.raw_data(), x.out = out.raw_data();
  kernel<ElementwiseArgs>("relu_grad", device, out.dtype())(x);
}

void Ops::sum_n(const std::vector<const void*>& inputs, void* out, DType dtype, int64_t count,
                KernelDevice device) const {
  if (count < 0) throw invalid_argument("sum_n: count " + std::to_string(count) + " is negative");
  if (count > 0 && out == nullptr) throw invalid_argument("sum_n: out is null");
  for (size_t i = 0; i < inputs.size(); ++i)
    if (count > 0 && inputs[i] == nullptr)
      throw invalid_argument("sum_n: input " + std::to_string(i) + " is null");
  SumNArgs x;
  x.dtype = dtype, x.count = count, x.inputs = inputs.data();
  x.num_inputs = int64_t(inputs.size()), x.out = out, x.ctx = gpu_;
  kernel<SumNArgs>("sum_n", device, dtype)(x);
}

void Ops::sum_n(const std::vector<Tensor>& inputs, Tensor& out) const {
  if (inputs.empty()) throw invalid_argument("sum_n: needs at least one input");
  std::vector<const void*> pointers;
  pointers.reserve(inputs.size());
  auto device = checks::common_device("sum_n", {{"out", out}});
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "inputs[" + std::to_string(i) + "]";
    checks::common_device("sum_n", {{"out", out}, {name.c_str(), inputs[i]}});
    checks::same_layout("sum_n", {name.c_str(), inputs[i]}, {"out", out});
    pointers.push_back(inputs[i].raw_data());
  }
  sum_n(pointers, out.raw_data(), out.dtype(), out.num_elements(), device);
}

void Ops::reduce_sum(const Tensor& a, Tensor& out) const {
  auto device = checks::common_device("reduce_sum", {{"a", a}, {"out", out}});
  checks::same_dtype("reduce_sum", {"a", a}, {"out", out});
  if (out.num_elements() != 1)
    throw invalid_argument("reduce_sum: out " + out.description() + " must hold one element");
  RowsArgs x;
  x.dtype = a.dtype(), x.rows = 1, x.cols = a.num_elements();
  x.a = a.raw_data(), x.out = out.raw_data(), x.ctx = gpu_;
  kernel<RowsArgs>("reduce_sum", device, a.dtype())(x);
}

Tensor Ops::reduce_sum(const Tensor& a) const {
  Tensor out(a.dtype(), Shape{});
  reduce_sum(a, out);
  return out;
}

}  // namespace troupe
