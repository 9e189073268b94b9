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

namespace detail {

/// Refuses, before any simulation, a "serving.kv_offload_bytes" above the memory_bytes of a
/// given fleet's GPU type or of every GPU candidate (a candidate whose host alone is too small
/// is an infeasible row: make_candidate), or for a GPU whose record has no host_link:
/// `<file>: field "serving.kv_offload_bytes": 3e+11 bytes (300 GB) are more than the host memory
/// of instance "aws-g6.xlarge" (17.18 GB, memory_bytes in <data>/instances/instances.json);
/// expected at most that` (with several GPU candidates: `of every GPU candidate (the largest:
/// instance "..." (..., memory_bytes in ...))`).
void check_kv_offload(const Scenario& sc, const model::Catalog& catalog);

}  // namespace detail
}  // namespace llmcap::plan
