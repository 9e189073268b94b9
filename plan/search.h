// The configuration search, Pareto frontier, uncertainty and the analyses of a plan (issue 5,
// items 1 and 2). Helper B owns this.
#pragma once

#include "plan/search_spec.h"
