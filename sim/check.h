// Always-on internal invariant checks of the simulator (not for bad input: that is InputError).
#pragma once

#include <cstdio>
#include <cstdlib>

/// Aborts with file:line and the failed condition when `cond` is false, in every build type.
/// A failure means a bug in the simulator, never bad user input.
#define LLMCAP_SIM_CHECK(cond)                                                               \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "%s:%d: llmcap sim invariant violated: %s\n", __FILE__, __LINE__, \
                   #cond);                                                                   \
      std::abort();                                                                          \
    }                                                                                        \
  } while (false)
