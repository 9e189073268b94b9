// The reader of a scenario's "serving.speculative" (plan/scenario.h, SpeculativeSpec).
#include <nlohmann/json.hpp>
#include <utility>

#include "base/json_reader.h"
#include "model/input_error.h"
#include "plan/scenario.h"
#include "plan/spec_parsers.h"

namespace llmcap::plan {

using nlohmann::json;

const char* speculative_method_name(SpeculativeSpec::Method method) {
  switch (method) {
    case SpeculativeSpec::Method::kNgram:
      return "ngram";
    case SpeculativeSpec::Method::kMtp:
      return "mtp";
    case SpeculativeSpec::Method::kEagle:
      return "eagle";
    case SpeculativeSpec::Method::kDraftModel:
      return "draft_model";
  }
  return "?";
}

/// "serving.speculative": {"method", "num_draft_tokens", "acceptance_rates", "draft_layers",
/// "draft_model", "source"}.
SpeculativeSpec parse_speculative_spec(const nlohmann::json& root,
                                       const std::filesystem::path& file,
                                       const std::filesystem::path& data_dir,
                                       std::vector<MissingFile>& missing) {
  const base::JsonReader scenario(root, file.string(), "");
  if (!scenario.has("serving") || !scenario.object("serving").has("speculative")) return {};
  const base::JsonReader sp = scenario.object("serving").object("speculative");
  sp.only(
      {"method", "num_draft_tokens", "acceptance_rates", "draft_layers", "draft_model", "source"});
  SpeculativeSpec spec;
  const std::string method = sp.string("method");
  bool known = false;
  for (const auto m : {SpeculativeSpec::Method::kNgram, SpeculativeSpec::Method::kMtp,
                       SpeculativeSpec::Method::kEagle, SpeculativeSpec::Method::kDraftModel}) {
    if (method == speculative_method_name(m)) {
      spec.method = m;
      known = true;
    }
  }
  if (!known)
    sp.fail("method", "\"mtp\", \"eagle\", \"draft_model\" or \"ngram\"", sp.got("method"));
  const int64_t k =
      sp.integer("num_draft_tokens", 1, "a whole number of draft tokens per step, >= 1");
  if (k > sim::kMaxDraftTokens) {
    sp.fail("num_draft_tokens", "at most " + std::to_string(sim::kMaxDraftTokens),
            sp.got("num_draft_tokens"));
  }
  const json& rates = sp.array("acceptance_rates", "an array of fractions");
  const std::string expected_rates =
      "one fraction in [0, 1] per draft token (" + std::to_string(k) +
      "), non-increasing (a draft position is accepted only when every earlier one is)";
  if (static_cast<int64_t>(rates.size()) != k) {
    sp.fail("acceptance_rates", expected_rates, sp.got("acceptance_rates"));
  }
  for (size_t i = 0; i < rates.size(); ++i) {
    const bool ok = rates[i].is_number() && rates[i].get<double>() >= 0.0 &&
                    rates[i].get<double>() <= 1.0 &&
                    (i == 0 || rates[i].get<double>() <= rates[i - 1].get<double>());
    if (!ok) sp.fail("acceptance_rates", expected_rates, sp.got("acceptance_rates"));
    spec.config.acceptance_rates.push_back(rates[i].get<double>());
  }
  spec.config.num_draft_tokens = k;
  const bool head = spec.method == SpeculativeSpec::Method::kMtp ||
                    spec.method == SpeculativeSpec::Method::kEagle;
  if (!head) sp.refuse("draft_layers", "only for method \"mtp\" or \"eagle\"");
  if (head) spec.draft_layers = sp.positive_int_or("draft_layers", 1);
  if (spec.method != SpeculativeSpec::Method::kDraftModel) {
    sp.refuse("draft_model", "only for method \"draft_model\"");
  } else {
    if (!sp.has("draft_model")) sp.fail_missing("draft_model", "method \"draft_model\" needs it");
    const std::string value = sp.non_empty_string("draft_model");
    ScenarioFileLookup found =
        find_scenario_file(value, ScenarioFileKind::kModel, file.parent_path(), data_dir);
    if (!found.found) {
      missing.push_back({sp.name("draft_model"), value, ScenarioFileKind::kModel,
                         std::move(found.looked), !data_dir.empty()});
    }
    spec.draft_model_config = found.path;
    if (std::filesystem::is_regular_file(spec.draft_model_config)) {
      try {
        spec.draft_model = std::make_shared<const model::ModelSpec>(
            model::load_model_spec(spec.draft_model_config));
      } catch (const InputError& e) {
        throw InputError(sp.file() + ": field \"" + sp.name("draft_model") + "\": " + e.what());
      }
    }
  }
  spec.source = sp.string_or("source", "");
  return spec;
}

}  // namespace llmcap::plan
