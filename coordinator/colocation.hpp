#pragma once
// TF's strategy.extended.colocate_vars_with(var): variables created by the calling thread inside
// a ColocateVariablesWith scope must live where `var` lives. An optimizer creates its slots in
// one, so a strategy that places variables (ParameterServerStrategy) puts each slot on its
// variable's shard(s) and the optimizer step runs there. Strategies that keep every variable on
// every replica satisfy it already.

#include <string>

namespace troupe {

/// Name of the variable new variables of this thread go beside ("" outside any scope).
inline std::string& current_colocation() {
  thread_local std::string name;
  return name;
}

/// Sets current_colocation() for its lifetime, restoring the previous one after.
class ColocateVariablesWith {
 public:
  explicit ColocateVariablesWith(std::string variable) : previous_(current_colocation()) {
    current_colocation() = std::move(variable);
  }
  ~ColocateVariablesWith() { current_colocation() = previous_; }
  ColocateVariablesWith(const ColocateVariablesWith&) = delete;
  ColocateVariablesWith& operator=(const ColocateVariablesWith&) = delete;

 private:
  std::string previous_;
};

}  // namespace troupe
