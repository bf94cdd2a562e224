// OpenSSL's error queue is per thread, and every TLS I/O call must start with it empty
// (SSL_get_error reads it to classify the call's result). CAF 0.17.6's openssl session never
// clears it: a stranger's failed handshake leaves its errors on the middleman's thread, and the
// next SSL_read of an established cluster connection on that thread — one that only wants more
// bytes — is classified SSL_ERROR_SSL and the connection is dropped. One refused client could so
// cut every worker off its cluster (tests/process/multi_worker_test.cpp,
// ForgedHeaderAtATrainingServerIsRefusedAndTheRunCompletes). These definitions, linked into the
// executable and exported (net/CMakeLists.txt), come before libssl's in symbol lookup: each
// clears the calling thread's queue and calls the real function.
#include <dlfcn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

namespace {

template <class Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  static const auto next = real<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  return next(ssl, buf, num);
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static const auto next = real<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return next(ssl, buf, num);
}

int SSL_accept(SSL* ssl) {
  static const auto next = real<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  return next(ssl);
}

int SSL_connect(SSL* ssl) {
  static const auto next = real<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  return next(ssl);
}

}  // extern "C"
