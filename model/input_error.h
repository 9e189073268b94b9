// Errors for bad input (files, fields, values) found at the edge of the model library.
#pragma once

#include <stdexcept>
#include <string>

#include "base/error.h"

namespace llmcap::model {

/// Thrown when a file, field or value given by the user cannot be used: the tree's one input
/// error type (base/error.h), the same type as sim::InputError and plan::InputError.
using InputError = base::InputError;

/// Thrown when a deployment is physically impossible (the model does not fit, an SLO is
/// below the roofline floor). The message states the numbers, e.g.
///   `weights need 141000000000 bytes, instance has 128000000000 bytes`.
class InfeasibleError : public std::runtime_error {
 public:
  explicit InfeasibleError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace llmcap::model
