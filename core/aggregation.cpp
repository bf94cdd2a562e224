#include "core/aggregation.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "core/status.hpp"

namespace troupe {
namespace {
std::string upper(std::string_view s) {
  std::string u(s);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::toupper(c); });
  return u;
}
}  // namespace

std::string_view sync_name(Sync s) {
  switch (s) {
    case Sync::automatic: return "AUTO";
    case Sync::on_write: return "ON_WRITE";
    case Sync::on_read: return "ON_READ";
    case Sync::none: return "NONE";
  }
  return "?";
}

std::string_view aggregation_name(Aggregation a) {
  switch (a) {
    case Aggregation::none: return "NONE";
    case Aggregation::sum: return "SUM";
    case Aggregation::mean: return "MEAN";
    case Aggregation::only_first_replica: return "ONLY_FIRST_REPLICA";
  }
  return "?";
}

Sync parse_sync(std::string_view text) {
  auto u = upper(text);
  if (u == "AUTO") return Sync::automatic;
  if (u == "ON_WRITE") return Sync::on_write;
  if (u == "ON_READ") return Sync::on_read;
  if (u == "NONE") return Sync::none;
  throw invalid_argument("invalid variable synchronization '" + std::string(text) +
                         "' (expected AUTO, ON_WRITE, ON_READ or NONE)");
}

Aggregation parse_aggregation(std::string_view text) {
  auto u = upper(text);
  if (u == "NONE") return Aggregation::none;
  if (u == "SUM") return Aggregation::sum;
  if (u == "MEAN") return Aggregation::mean;
  if (u == "ONLY_FIRST_REPLICA") return Aggregation::only_first_replica;
  throw invalid_argument("invalid variable aggregation '" + std::string(text) +
                         "' (expected NONE, SUM, MEAN or ONLY_FIRST_REPLICA)");
}

ReduceOp reduce_op_for(Aggregation a) {
  if (a == Aggregation::sum) return ReduceOp::sum;
  if (a == Aggregation::mean) return ReduceOp::mean;
  throw invalid_argument("could not convert aggregation " + std::string(aggregation_name(a)) +
                         " to a ReduceOp");
}

}  // namespace troupe
