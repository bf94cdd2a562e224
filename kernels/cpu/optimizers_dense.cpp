// Dense optimizer updates on the CPU: one TF formula over the whole variable.

#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/optimizer_math.hpp"

namespace troupe::cpu {
namespace {

template <class T>
T* typed(void* p) {
  return static_cast<T*>(p);
}
template <class T>
const T* typed(const void* p) {
  return static_cast<const T*>(p);
}

template <class T>
void apply_sgd(const OptimizerArgs& x) {
  sgd_span(typed<T>(x.var), typed<T>(x.grad), x.count, x.hyper);
}

template <class T>
void apply_momentum(const OptimizerArgs& x) {
  momentum_span(typed<T>(x.var), typed<T>(x.slot1), typed<T>(x.grad), x.count, x.hyper);
}

template <class T>
void apply_adam(const OptimizerArgs& x) {
  adam_span(typed<T>(x.var), typed<T>(x.slot1), typed<T>(x.slot2), typed<T>(x.grad), x.count,
            x.hyper);
}

template <class T>
void apply_adagrad(const OptimizerArgs& x) {
  adagrad_span(typed<T>(x.var), typed<T>(x.slot1), typed<T>(x.grad), x.count, x.hyper);
}

}  // namespace

void register_dense_optimizers(KernelRegistry& r) {
  using A = OptimizerArgs;
  add_float_kernels<A>(r, "apply_sgd", apply_sgd<float>, apply_sgd<double>);
  add_float_kernels<A>(r, "apply_momentum", apply_momentum<float>, apply_momentum<double>);
  add_float_kernels<A>(r, "apply_adam", apply_adam<float>, apply_adam<double>);
  add_float_kernels<A>(r, "apply_adagrad", apply_adagrad<float>, apply_adagrad<double>);
}

}  // namespace troupe::cpu
