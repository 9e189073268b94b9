// Errors for bad input found at the edge of the simulator (traces, policy names, configs).
#pragma once

#include "base/error.h"

namespace llmcap::sim {

/// One-line message naming the file, the field (or line and column), the value and what was
/// expected, e.g. `trace.csv: line 12, column 2 ("ContextTokens"): expected a non-negative
/// integer, got "abc"`. The tree's one input error type (base/error.h), the same type as
/// model::InputError and plan::InputError.
using InputError = base::InputError;

}  // namespace llmcap::sim
