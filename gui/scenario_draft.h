// A scenario being edited in the GUI: the scenario file's JSON plus the what-if edits (load
// multiplier, SLO, weight format, price model, candidates, edited prices). No Qt here.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/hardware.h"
#include "plan/price_overrides.h"
#include "plan/scenario.h"

namespace llmcap::gui {

/// A price the user typed for one instance type and price model. Saved with the scenario in
/// "price_overrides" (docs/scenarios.md), which `llmcap plan` applies too.
using PriceOverride = plan::PriceOverride;

/// The scenario's JSON as edited. Every setter edits the JSON only; scenario() validates it
/// through plan::load_scenario_text, so the GUI never holds a scenario the CLI would refuse.
/// The load multiplier is kept apart from the JSON: effective_json() applies it to the
/// workload as plan::with_load_multiplier does (a trace's rate_multiplier, an arrival
/// process's rate_per_s, a closed loop's num_users, each client class likewise).
class ScenarioDraft {
 public:
  ScenarioDraft() = default;

  /// Reads and validates a scenario file; its model and workload ids are looked up in
  /// `data_dir` (plan::load_scenario). Throws plan::InputError naming the file (and field) for a
  /// missing file, malformed JSON or an invalid scenario.
  static ScenarioDraft from_file(const std::filesystem::path& path,
                                 const std::filesystem::path& data_dir = {});
  /// The same over JSON text that stands for the file `path`.
  static ScenarioDraft from_text(const std::string& text, const std::filesystem::path& path,
                                 const std::filesystem::path& data_dir = {});

  const std::filesystem::path& path() const { return path_; }
  void set_path(const std::filesystem::path& path) { path_ = path; }
  bool empty() const { return json_.is_null(); }

  /// The JSON as loaded and edited, without the load multiplier.
  const nlohmann::json& json() const { return json_; }
  /// With the load multiplier applied.
  nlohmann::json effective_json() const;
  /// effective_json() as indented text, as saved.
  std::string text() const;

  /// The validated scenario of effective_json() (plan::load_scenario_text). Throws
  /// plan::InputError naming the file and field.
  plan::Scenario scenario() const;

  // What-if edits. Values are not checked here; scenario() checks them.
  double load_multiplier() const { return load_multiplier_; }
  void set_load_multiplier(double multiplier) { load_multiplier_ = multiplier; }
  /// True without client classes (only then do the SLO setters apply).
  bool has_single_slo() const;
  double slo_ttft_s() const;  ///< 0 when absent
  double slo_tpot_s() const;
  /// The scenario as JSON text without what cannot change whether a fleet meets the SLO, or
  /// is compared separately: the load multiplier (kept apart already), "slo", "tco" (price
  /// model) and "price_overrides". Two drafts with equal contexts differ at most in those.
  std::string verdict_context() const;
  void set_slo(double ttft_p99_s, double tpot_p99_s);
  std::string weight_format() const;                ///< "bf16" when absent
  void set_weight_format(const std::string& name);  ///< every device kind's
  /// The weight format of `kind` ("gpu" or "cpu"): "weight_format" when it is one name, else
  /// its entry for the kind; "bf16" when absent.
  std::string weight_format(const std::string& kind) const;
  /// Sets the weight format of `kind` ("gpu" or "cpu") only ("weight_format" becomes
  /// {"gpu": ..., "cpu": ...}, the other kind keeping its own).
  void set_weight_format(const std::string& kind, const std::string& name);
  std::string currency() const;                ///< "tco.currency", "USD" when absent
  void set_currency(const std::string& code);  ///< "USD" removes it
  std::string price_model() const;  ///< "" when the scenario names none (the catalog's own)
  void set_price_model(const std::string& name);  ///< "" removes it
  /// Candidate ids; empty means every instance type of the catalog ("all").
  std::vector<std::string> candidates() const;
  void set_candidates(const std::vector<std::string>& ids);
  /// The model file "model" names (plan::find_scenario_file: the scenario's folder, then the
  /// data folder's ids); the scenario-relative path when it is found nowhere.
  std::filesystem::path model_path() const;
  /// Stores `config_json` by id when that id names it (a model of the data folder), else
  /// relative to the scenario's folder when it lies below it, else as given.
  void set_model_path(const std::filesystem::path& config_json);
  void set_workload(const nlohmann::json& workload) { json_["workload"] = workload; }
  void set_name(const std::string& name) { json_["name"] = name; }

  /// Edited prices, in "price_overrides" order.
  std::vector<PriceOverride> price_overrides() const;
  /// Adds or replaces the override for (instance, price_model).
  void set_price_override(const PriceOverride& price);
  void clear_price_override(const std::string& instance, const std::string& price_model);

  /// Folds the load multiplier into the JSON (as saved) and resets it to 1.
  void commit_load_multiplier();
  /// Moves the draft to `path` (Save as): relative paths inside ("model", a workload's "path"
  /// or "lengths_path", each class's) are rewritten relative to the new folder, so that they
  /// still name the same files. Ids (a bare name with no file of that name in the old folder)
  /// are kept as they are: they name the data folder's file wherever the scenario lies.
  void rebase(const std::filesystem::path& path);

 private:
  std::filesystem::path path_;
  std::filesystem::path data_dir_;  ///< where ids are looked up (empty: paths only)
  nlohmann::json json_;
  double load_multiplier_ = 1.0;
};

/// `catalog` with each override's offer replaced (usd_per_hour, source "edited in llmcap-gui",
/// as_of the edit's date), an offer added when the instance had none under that price model.
/// Throws plan::InputError naming `file`, "price_overrides[i]" and the value for an unknown
/// instance, an unknown price model or a non-positive price.
model::Catalog catalog_with_prices(const model::Catalog& catalog,
                                   const std::vector<PriceOverride>& overrides,
                                   const std::string& file);

/// Parses a price typed by the user ("1.234", " 2 "). Throws plan::InputError
/// "<file>: field "price_overrides.<instance>.<price_model>": expected a positive number of USD
/// per hour, got "<text>"" otherwise.
double parse_price_text(const std::string& text, const std::string& file,
                        const std::string& instance, const std::string& price_model);

}  // namespace llmcap::gui
