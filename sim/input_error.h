// Errors for bad input found at the edge of the simulator (traces, policy names, configs).
#pragma once

#include <stdexcept>
#include <string>

namespace llmcap::sim {

/// One-line message naming the file, the field (or line and column), the value and what was
/// expected, e.g. `trace.csv: line 12, column 2 ("ContextTokens"): expected a non-negative
/// integer, got "abc"`.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace llmcap::sim
