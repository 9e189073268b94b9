// The what-ifs a session keeps (docs/gui.md, "Runs"): each finished what-if under a name that
// says what differs from the scenario as opened, in the Runs tab (RunsView::keep_what_if).
#include <QStringList>
#include <cmath>
#include <nlohmann/json.hpp>

#include "app/answer_json.h"
#include "gui/main_window.h"
#include "gui/runs_view.h"

namespace llmcap::gui {

QString MainWindow::what_if_name() const {
  QStringList parts;
  if (std::abs(draft_.load_multiplier() - opened_draft_.load_multiplier()) > 1e-9) {
    parts << tr("load %1×").arg(draft_.load_multiplier(), 0, 'f', 2);
  }
  for (const char* kind : {"gpu", "cpu"}) {
    if (draft_.weight_format(kind) != opened_draft_.weight_format(kind)) {
      parts << (std::string(kind) == "gpu" ? tr("%1 on GPUs") : tr("%1 on CPUs"))
                   .arg(QString::fromStdString(draft_.weight_format(kind)));
    }
  }
  if (draft_.slo_ttft_s() != opened_draft_.slo_ttft_s() ||
      draft_.slo_tpot_s() != opened_draft_.slo_tpot_s()) {
    parts << tr("p99 TTFT %1 s, TPOT %2 s")
                 .arg(draft_.slo_ttft_s(), 0, 'g', 3)
                 .arg(draft_.slo_tpot_s(), 0, 'g', 3);
  }
  if (draft_.price_model() != opened_draft_.price_model()) {
    parts << (draft_.price_model().empty() ? tr("catalog prices")
                                           : QString::fromStdString(draft_.price_model()));
  }
  if (draft_.currency() != opened_draft_.currency()) {
    parts << QString::fromStdString(draft_.currency());
  }
  if (draft_.price_overrides().size() != opened_draft_.price_overrides().size()) {
    parts << tr("edited prices");
  }
  if (draft_.candidates() != opened_draft_.candidates()) parts << tr("other candidates");
  if (parts.isEmpty() && draft_.text() != opened_draft_.text()) parts << tr("edited scenario");
  return parts.isEmpty() ? tr("as opened") : parts.join(QStringLiteral(", "));
}

void MainWindow::keep_what_if(const PlanOutcome& outcome) {
  nlohmann::json doc = {{"kind", "what_if"}, {"results", nlohmann::json::array()}};
  for (const ResultRow& r : outcome.rows) {
    nlohmann::json row = {{"instance_type", r.instance_type},
                          {"device_kind", r.device_kind},
                          {"feasible", r.feasible}};
    if (r.feasible) {
      row["num_instances"] = r.num_instances;
      row["usd_per_hour"] = r.usd_per_hour;
      row["usd_per_million_output_tokens"] = r.usd_per_million_output_tokens;
      row["ttft_p50_s"] = r.ttft_p50_s;
      row["ttft_p90_s"] = r.ttft_p90_s;
      row["ttft_p99_s"] = r.ttft_p99_s;
      row["ttft_max_s"] = r.ttft_max_s;
      row["tpot_p50_s"] = r.tpot_p50_s;
      row["tpot_p90_s"] = r.tpot_p90_s;
      row["tpot_p99_s"] = r.tpot_p99_s;
      row["tpot_max_s"] = r.tpot_max_s;
    } else {
      row["infeasible_reason"] = r.infeasible_reason;
    }
    doc["results"].push_back(std::move(row));
  }
  if (outcome.answer) doc["answer"] = app::answer_to_json(*outcome.answer);
  nlohmann::json fleets = nlohmann::json::array();
  for (const plan::FleetOverDay& f : outcome.fleet_over_day) {
    fleets.push_back({{"instance_type", f.instance_type},
                      {"hourly_load_multiplier", f.hourly_load_multiplier},
                      {"hourly_instances", f.hourly_instances},
                      {"origin", f.origin}});
  }
  doc["analysis"] = {{"fleet_over_day", fleets}};
  runs_->keep_what_if(what_if_name(), std::move(doc));
}

}  // namespace llmcap::gui
