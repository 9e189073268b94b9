#include "cli/plan_run.h"

#include "cli/plan_output.h"

namespace llmcap::cli {

PlanRun make_plan_run(const plan::Scenario& scenario, const model::Catalog& catalog,
                      const PlanRunOptions& options) {
  PlanRun run;
  run.result = plan::plan(scenario, catalog, options.plan);
  nlohmann::json doc = nlohmann::json::parse(plan_to_json(scenario, run.result));
  doc["format"] = "llmcap-run";
  doc["schema_version"] = kRunDocumentVersion;
  doc["kind"] = "plan";
  doc["analysis"] = nlohmann::json::object();
  run.document = std::move(doc);
  return run;
}

}  // namespace llmcap::cli
