// Element-wise CUDA kernels: grid-stride loops, one element per thread per iteration. Each thread
// reads its inputs before writing, so out == a (in place) is safe as on the CPU.

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_kernel_list.hpp"
#include "kernels/kernel_args.hpp"

namespace troupe::cuda {
namespace {

template <class T, class F>
__global__ void map_kernel(const T* a, const T* b, T* out, int64_t n, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(blockDim.x) * gridDim.x)
    out[i] = f(a ? a[i] : T(0), b ? b[i] : T(0), out[i]);
}

// out[i] = f(a[i], b[i], out[i]) on the args' stream.
template <class T, class F>
void launch(const ElementwiseArgs& x, const char* name, F f) {
  if (x.count == 0) return;
  map_kernel<<<blocks_for(x.count), kThreads, 0, stream_of(x.ctx.stream)>>>(
      static_cast<const T*>(x.a), static_cast<const T*>(x.b), static_cast<T*>(x.out), x.count, f);
  check_launch(name);
}

template <class T>
struct Add {
  __device__ T operator()(T a, T b, T) const { return a + b; }
};
template <class T>
struct Sub {
  __device__ T operator()(T a, T b, T) const { return a - b; }
};
template <class T>
struct Scale {
  T alpha;
  __device__ T operator()(T a, T, T) const { return alpha * a; }
};
template <class T>
struct Axpy {
  T alpha;
  __device__ T operator()(T a, T, T y) const { return y + alpha * a; }
};
template <class T>
struct Fill {
  T value;
  __device__ T operator()(T, T, T) const { return value; }
};
template <class T>
struct Relu {
  __device__ T operator()(T a, T, T) const { return a > T(0) ? a : T(0); }
};
template <class T>
struct ReluGrad {
  __device__ T operator()(T grad, T feature, T) const { return feature > T(0) ? grad : T(0); }
};

template <class T>
void add(const ElementwiseArgs& x) {
  launch<T>(x, "add", Add<T>{});
}
template <class T>
void sub(const ElementwiseArgs& x) {
  launch<T>(x, "sub", Sub<T>{});
}
template <class T>
void scale(const ElementwiseArgs& x) {
  launch<T>(x, "scale", Scale<T>{T(x.alpha)});
}
template <class T>
void axpy(const ElementwiseArgs& x) {
  launch<T>(x, "axpy", Axpy<T>{T(x.alpha)});
}
template <class T>
void fill(const ElementwiseArgs& x) {
  ElementwiseArgs y = x;
  y.a = y.b = nullptr;
  launch<T>(y, "fill", Fill<T>{T(x.alpha)});
}
template <class T>
void copy(const ElementwiseArgs& x) {
  if (x.count == 0 || x.a == x.out) return;
  check(cudaMemcpyAsync(x.out, x.a, size_t(x.count) * sizeof(T), cudaMemcpyDeviceToDevice,
                        stream_of(x.ctx.stream)),
        "copy");
}
template <class T>
void relu(const ElementwiseArgs& x) {
  launch<T>(x, "relu", Relu<T>{});
}
template <class T>
void relu_grad(const ElementwiseArgs& x) {
  launch<T>(x, "relu_grad", ReluGrad<T>{});
}

}  // namespace

void register_elementwise(KernelRegistry& r) {
  using A = ElementwiseArgs;
  add_numeric_kernels<A>(r, "add", add<float>, add<double>, add<int32_t>, add<int64_t>);
  add_numeric_kernels<A>(r, "sub", sub<float>, sub<double>, sub<int32_t>, sub<int64_t>);
  add_numeric_kernels<A>(r, "fill", fill<float>, fill<double>, fill<int32_t>, fill<int64_t>);
  add_numeric_kernels<A>(r, "copy", copy<float>, copy<double>, copy<int32_t>, copy<int64_t>);
  add_float_kernels<A>(r, "scale", scale<float>, scale<double>);
  add_float_kernels<A>(r, "axpy", axpy<float>, axpy<double>);
  add_float_kernels<A>(r, "relu", relu<float>, relu<double>);
  add_float_kernels<A>(r, "relu_grad", relu_grad<float>, relu_grad<double>);
}

}  // namespace troupe::cuda
