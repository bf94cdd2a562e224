#pragma once
// Runs `troupe collective-peer` ranks as child processes for `troupe bench allreduce
// --processes N`: starts them, hands every rank the others' ports, collects their RESULT lines.

#include <string>
#include <vector>

namespace troupe {

/// What one rank reported.
struct RankReport {
  bool ok = false;
  double seconds_per_all_reduce = 0;
  double checksum = 0;
  std::string line;  ///< the raw RESULT line (or what went wrong)
};

/// Starts `ranks` processes of `binary collective-peer --rank r --size ranks <peer_args...>` with
/// TROUPE_SECRET=`secret`, wires them, waits (at most `timeout_s`) and returns each rank's report.
std::vector<RankReport> run_collective_processes(const std::string& binary, int ranks,
                                                 const std::vector<std::string>& peer_args,
                                                 const std::string& secret, int timeout_s);

}  // namespace troupe
