// Total cost of ownership of a planned fleet (issue 5, item 3; docs/tco.md). Helper A owns this.
#pragma once

#include "plan/tco_spec.h"
