#pragma once
// TensorFlow's optimizer update formulas (training_ops.cc) over a span of `n` elements, computed in
// T like TF's functors. Dense kernels apply them to a whole variable, sparse kernels to one row at
// a time. Internal to kernels/cpu.

#include <cmath>
#include <cstdint>

#include "kernels/kernel_args.hpp"

namespace troupe::cpu {

/// ApplyGradientDescent: var -= lr * grad.
template <class T>
void sgd_span(T* __restrict var, const T* __restrict grad, int64_t n, const OptimizerHyper& h) {
  const T lr = T(h.lr);
  for (int64_t i = 0; i < n; ++i) var[i] -= lr * grad[i];
}

/// ApplyMomentum: accum = accum * momentum + grad; var -= lr * accum
/// (Nesterov: var -= grad * lr + accum * momentum * lr).
template <class T>
void momentum_span(T* __restrict var, T* __restrict accum, const T* __restrict grad, int64_t n,
                   const OptimizerHyper& h) {
  const T lr = T(h.lr), momentum = T(h.momentum);
  if (h.nesterov) {
    for (int64_t i = 0; i < n; ++i) {
      accum[i] = accum[i] * momentum + grad[i];
      var[i] -= grad[i] * lr + accum[i] * momentum * lr;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      accum[i] = accum[i] * momentum + grad[i];
      var[i] -= accum[i] * lr;
    }
  }
}

/// ApplyAdam: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t); m += (g - m) * (1 - beta1);
/// v += (g * g - v) * (1 - beta2); var -= lr_t * m / (sqrt(v) + epsilon).
template <class T>
void adam_span(T* __restrict var, T* __restrict m, T* __restrict v, const T* __restrict grad,
               int64_t n, const OptimizerHyper& h) {
  const T alpha = T(h.lr) * std::sqrt(T(1) - T(h.beta2_power)) / (T(1) - T(h.beta1_power));
  const T one_minus_beta1 = T(1) - T(h.beta1), one_minus_beta2 = T(1) - T(h.beta2);
  const T epsilon = T(h.epsilon);
  for (int64_t i = 0; i < n; ++i) {
    m[i] += (grad[i] - m[i]) * one_minus_beta1;
    v[i] += (grad[i] * grad[i] - v[i]) * one_minus_beta2;
    var[i] -= (m[i] * alpha) / (std::sqrt(v[i]) + epsilon);
  }
}

/// ApplyAdagradV2 (Keras v2 Adagrad): accum += g * g; var -= lr * g / (sqrt(accum) + epsilon).
template <class T>
void adagrad_span(T* __restrict var, T* __restrict accum, const T* __restrict grad, int64_t n,
                  const OptimizerHyper& h) {
  const T lr = T(h.lr), epsilon = T(h.epsilon);
  for (int64_t i = 0; i < n; ++i) {
    accum[i] += grad[i] * grad[i];
    var[i] -= lr * grad[i] / (std::sqrt(accum[i]) + epsilon);
  }
}

}  // namespace troupe::cpu
