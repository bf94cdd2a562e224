"""OpenMPI peer: MPI_Allreduce (SUM, float32, in place) through mpi4py on 2 ranks. Start with
  private_net.sh mpirun -np 2 --mca btl self,vader --mca oob_tcp_if_include lo \
      python3 mpi_allreduce.py
(OpenMPI's own shared-memory transport between ranks of one host; mpirun's PMIx server binds
0.0.0.0, hence the private network namespace with only loopback).
Rank 0 prints one JSON object (allreduce_common)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import allreduce_common as common  # noqa: E402
import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402


def main():
    comm = MPI.COMM_WORLD
    ranks = comm.Get_size()
    rows = []
    for size in common.SIZES:
        buf = np.ones(size // 4, dtype=np.float32)
        comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)  # warm-up
        if buf[0] != ranks:
            raise RuntimeError(f"MPI_Allreduce of {size} bytes gave {buf[0]}, not {ranks}")
        reps = common.reps_for(size)
        comm.Barrier()
        start = MPI.Wtime()
        for _ in range(reps):
            comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
        seconds = comm.allreduce((MPI.Wtime() - start) / reps, op=MPI.MAX)
        rows.append(common.row(size, seconds, ranks))
    if comm.Get_rank() == 0:
        lib = MPI.Get_library_version().replace("\x00", "").strip().splitlines()[0]
        common.emit("openmpi", "MPI_Allreduce via mpi4py, 2 processes, btl self,vader", lib,
                    ranks, rows, mpi4py=__import__("mpi4py").__version__)


if __name__ == "__main__":
    main()
