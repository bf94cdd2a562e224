#pragma once
// Hand-written double-precision references of TensorFlow's optimizer formulas (training_ops.cc),
// one element at a time, for the optimizer tests.

#include <cmath>

namespace troupe::testing {

/// ApplyGradientDescent.
inline void ref_sgd(double& var, double g, double lr) { var -= lr * g; }

/// ApplyMomentum.
inline void ref_momentum(double& var, double& accum, double g, double lr, double momentum,
                         bool nesterov) {
  accum = accum * momentum + g;
  var -= nesterov ? g * lr + accum * momentum * lr : accum * lr;
}

/// ApplyAdam at 1-based step t.
inline void ref_adam(double& var, double& m, double& v, double g, double lr, double b1, double b2,
                     double eps, int t) {
  const double lr_t = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
  m = m + (g - m) * (1 - b1);
  v = v + (g * g - v) * (1 - b2);
  var -= lr_t * m / (std::sqrt(v) + eps);
}

/// ApplyAdagradV2 (Keras v2 Adagrad).
inline void ref_adagrad(double& var, double& accum, double g, double lr, double eps) {
  accum += g * g;
  var -= lr * g / (std::sqrt(accum) + eps);
}

}  // namespace troupe::testing
