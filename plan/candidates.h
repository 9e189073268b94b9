// The candidate instance types of a scenario, resolved once for every planning entry point.
#pragma once

#include <vector>

#include "model/hardware.h"
#include "plan/scenario.h"

namespace llmcap::plan {

/// The instance types the planner searches for `scenario`, in candidate order: the catalog
/// records of Scenario::candidates in the scenario's order, or every instance type of
/// `catalog` in catalog order when the scenario lists none ("all"); empty for a given fleet
/// (Scenario::fleet is evaluated as one row). The pointers point into `catalog`.
/// Throws InputError::refused_field for an id the catalog lacks:
///   `<file>: field "candidates": unknown instance type "<id>"; known: <ids, comma-separated>`
/// (field_path() "candidates").
std::vector<const model::InstanceType*> resolve_candidates(const Scenario& scenario,
                                                           const model::Catalog& catalog);

}  // namespace llmcap::plan
