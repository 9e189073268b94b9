// The run document's "answer" object (docs/run-document.md, "answer"): plan::Answer as JSON,
// and back, so the report and the GUI render the answer the plan computed.
#pragma once

#include <nlohmann/json.hpp>

#include "plan/answer.h"

namespace llmcap::app {

/// {"feasible", "headline", "instance_type", "device_kind", "hardware_name", "num_instances",
/// "num_instances_billed", "configuration", "from_search", "price_model" (the scenario's, or
/// "catalog"), "offer" (the price model the recommendation is costed at), "currency",
/// "cost_per_hour", "cost_per_month", "cost_per_year", "cost_per_million_output_tokens",
/// "cost_range_95": [low, high] | null (high null when the high case meets no SLO),
/// "confidence", "dominant_assumption", "binding_constraint", "binding_margin",
/// "binding_text", "runner_up": option | null, "other_device_kind": {"kind", "cheapest":
/// option | null, "cost_ratio", "text"} | null (null when that kind was no candidate),
/// "why_not": [text]}. An option is {"instance_type", "device_kind", "hardware_name",
/// "num_instances", "num_instances_billed", "configuration", "from_search", "price_model",
/// "cost_per_hour", "cost_per_year", "cost_per_million_output_tokens"}. Money is in
/// "currency" under each option's "price_model". An infeasible answer has the recommendation's
/// keys null.
nlohmann::json answer_to_json(const plan::Answer& answer);

/// The inverse of answer_to_json. Throws nlohmann::json::exception for a document that does
/// not have that shape (the run document's readers check the version first).
plan::Answer answer_from_json(const nlohmann::json& j);

}  // namespace llmcap::app
