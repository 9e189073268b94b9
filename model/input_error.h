// Errors for bad input (files, fields, values) found at the edge of the model library.
#pragma once

#include <stdexcept>
#include <string>

namespace llmcap::model {

/// Thrown when a file, field or value given by the user cannot be used.
/// The message is one line that names the file, the field (or line and column), the value
/// and what was expected, e.g.
///   `data/models/x.json: field "num_hidden_layers": expected a positive integer, got -3`.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

/// Thrown when a deployment is physically impossible (the model does not fit, an SLO is
/// below the roofline floor). The message states the numbers, e.g.
///   `weights need 141000000000 bytes, instance has 128000000000 bytes`.
class InfeasibleError : public std::runtime_error {
 public:
  explicit InfeasibleError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace llmcap::model
