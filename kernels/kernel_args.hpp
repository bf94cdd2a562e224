#pragma once
// Argument packs handed to registered kernels. Each is raw pointers + dtype + counts, so one
// kernel signature serves every dtype and the same struct drives the CPU and the CUDA version.
// Pointers refer to memory of the kernel's device (host for cpu, device memory for gpu). Shapes
// were checked by the caller (kernels/ops.hpp); kernels trust these fields.

#include <cstdint>

#include "core/dtype.hpp"

namespace troupe {

/// Where a GPU kernel runs: a cudaStream_t and a cublasHandle_t, type-erased so that this header
/// compiles without CUDA. Both null on the CPU (and null stream = CUDA's default stream).
struct DeviceContext {
  void* stream = nullptr;
  void* blas_handle = nullptr;
};

/// Element-wise ops over `count` elements. `out` may equal `a` (in place); other overlaps are not
/// supported. Ops: add (out = a + b), scale (out = alpha * a), axpy (out += alpha * a),
/// fill (out = alpha, converted to dtype), copy (out = a), relu (out = max(a, 0)),
/// relu_grad (out = a where b > 0 else 0; a = gradients, b = features, as TF's ReluGrad).
struct ElementwiseArgs {
  DType dtype = DType::float32;
  int64_t count = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* out = nullptr;
  double alpha = 1.0;
  DeviceContext ctx;
};

/// sum_n: out = inputs[0] + ... + inputs[num_inputs - 1], each `count` elements. `out` may equal
/// one of the inputs.
struct SumNArgs {
  DType dtype = DType::float32;
  int64_t count = 0;
  const void* const* inputs = nullptr;  // host array of num_inputs pointers
  int64_t num_inputs = 0;
  void* out = nullptr;
  DeviceContext ctx;
};

/// Row-wise ops on a row-major [rows, cols] matrix. bias_add: out[r, c] = a[r, c] + b[c];
/// bias_add_grad: out[c] = sum_r a[r, c]; reduce_sum: out[0] = sum of all rows*cols elements.
struct RowsArgs {
  DType dtype = DType::float32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* out = nullptr;
  DeviceContext ctx;
};

/// c = alpha * op(a) @ op(b) + beta * c with op(a) [m, k], op(b) [k, n], c [m, n], row-major.
struct MatmulArgs {
  DType dtype = DType::float32;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  bool transpose_a = false;
  bool transpose_b = false;
  double alpha = 1.0;
  double beta = 0.0;
  DeviceContext ctx;
};

/// Sparse softmax cross-entropy over [rows, classes] logits with one label per row:
/// loss[r] = logsumexp(logits[r]) - logits[r, label[r]]; grad[r] = softmax(logits[r]) - onehot.
struct SoftmaxXentArgs {
  DType dtype = DType::float32;
  DType label_dtype = DType::int32;
  int64_t rows = 0;
  int64_t classes = 0;
  const void* logits = nullptr;
  const void* labels = nullptr;
  void* loss = nullptr;
  void* grad = nullptr;
  DeviceContext ctx;
};

/// Row gather/scatter over `rows` x `row_elements` tables. gather_rows: out[i] = table[idx[i]];
/// scatter_add_rows: table[idx[i]] += updates[i], in index order. Indices must be in
/// [0, table_rows) (the caller checks host indices; CPU kernels check again).
struct RowIndexArgs {
  DType dtype = DType::float32;
  DType index_dtype = DType::int32;
  int64_t num_indices = 0;
  int64_t row_elements = 0;
  int64_t table_rows = 0;
  const void* indices = nullptr;
  void* table = nullptr;          // params (read) for gather, target (written) for scatter
  const void* updates = nullptr;  // scatter only
  void* out = nullptr;            // gather only
  DeviceContext ctx;
};

/// Hyper-parameters of every optimizer update, in TensorFlow's names.
struct OptimizerHyper {
  double lr = 0.01;
  double momentum = 0.0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999;
  double beta1_power = 0.9, beta2_power = 0.999;  // beta^t for the current step t
  double epsilon = 1e-7;
};

/// One optimizer update. Dense: `count` elements of var/slots/grad. Sparse: `num_indices` rows of
/// `row_elements` each; grad is [num_indices, row_elements] and row i updates row indices[i] of
/// var and the slots, in index order (duplicates apply one after another, as TF's sparse ops do).
/// slot1 = accum (momentum, adagrad) or m (adam); slot2 = v (adam).
struct OptimizerArgs {
  DType dtype = DType::float32;
  int64_t count = 0;
  void* var = nullptr;
  void* slot1 = nullptr;
  void* slot2 = nullptr;
  const void* grad = nullptr;
  // sparse only
  DType index_dtype = DType::int32;
  const void* indices = nullptr;
  int64_t num_indices = 0;
  int64_t row_elements = 0;
  int64_t table_rows = 0;
  OptimizerHyper hyper;
  DeviceContext ctx;
};

}  // namespace troupe
