#!/bin/sh
# Runs a command in a private network namespace with only loopback up, for peers that open
# listening sockets on every interface (mpirun's PMIx server binds 0.0.0.0 whatever
# oob_tcp_if_include says; TensorFlow's gRPC server binds 0.0.0.0): nothing outside can reach them.
exec unshare -n -- sh -c 'ip link set lo up && exec "$@"' private-net "$@"
