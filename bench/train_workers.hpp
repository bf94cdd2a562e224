#pragma once
// `troupe bench train --workers W`: the MLP of `bench train` trained by the real runner, as W
// processes x 1 replica (`troupe launch -n W`, multi_worker_mirrored) next to 1 process x W
// replicas (`troupe run`, mirrored), same data, global batch and steps, rounds interleaved.

namespace troupe {

/// Runs the comparison and prints a table (or one JSON object); returns the exit code.
int run_train_workers_comparison(int workers, int steps, int rounds, bool json);

}  // namespace troupe
