// Wall time spent inside a few CUDA runtime calls, printed at exit: LD_PRELOAD it under a program
// linked against the shared libcudart to see how much of a GPU step the host spends allocating,
// copying and waiting (no CUDA headers needed; the wrappers forward to the real functions).
//   gcc -O2 -shared -fPIC -o /tmp/cuda_call_time.so bench/cuda_call_time.c -ldl
//   LD_PRELOAD=/tmp/cuda_call_time.so troupe run --file gpu.yaml
// Each copy through cudaMemcpy waits for the GPU work queued before it, so its time includes
// that work: read it as "host blocked", not as transfer time. The counters are not atomic: run it
// on one GPU replica (one host thread calling CUDA).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
enum { MALLOC, FREE, MEMCPY, MEMCPYASYNC, STREAMSYNC, DEVSYNC, N };
static const char* names[N] = {
    "cudaMalloc",           "cudaFree", "cudaMemcpy", "cudaMemcpyAsync", "cudaStreamSynchronize",
    "cudaDeviceSynchronize"};
static double tot[N];
static long cnt[N];
static double start;
__attribute__((constructor)) static void init(void) { start = now(); }
__attribute__((destructor)) static void fini(void) {
  double w = now() - start;
  fprintf(stderr, "cuda_call_time: wall %.3f s\n", w);
  for (int i = 0; i < N; i++)
    fprintf(stderr, "cuda_call_time: %-22s %8ld calls %8.3f s (%.1f %% of wall)\n", names[i],
            cnt[i], tot[i], 100 * tot[i] / w);
}
#define WRAP(idx, name, params, args)    \
  int name params {                      \
    static int(*f) params;               \
    if (!f) f = dlsym(RTLD_NEXT, #name); \
    double t = now();                    \
    int r = f args;                      \
    tot[idx] += now() - t;               \
    cnt[idx]++;                          \
    return r;                            \
  }
WRAP(MALLOC, cudaMalloc, (void** p, size_t n), (p, n))
WRAP(FREE, cudaFree, (void* p), (p))
WRAP(MEMCPY, cudaMemcpy, (void* d, const void* s, size_t n, int k), (d, s, n, k))
WRAP(MEMCPYASYNC, cudaMemcpyAsync, (void* d, const void* s, size_t n, int k, void* st),
     (d, s, n, k, st))
WRAP(STREAMSYNC, cudaStreamSynchronize, (void* s), (s))
WRAP(DEVSYNC, cudaDeviceSynchronize, (void), ())
