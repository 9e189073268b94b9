#include "gui/answer_card.h"

#include <QLabel>
#include <QVBoxLayout>
#include <cmath>

#include "base/text.h"

namespace llmcap::gui {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString money(const std::string& currency, double amount, bool whole = false) {
  return q(base::money(currency, amount, whole));
}

/// Whether the recommendation differs (fleet, configuration or cost to the cent).
bool changed(const plan::Answer& a, const plan::Answer& b) {
  if (a.feasible != b.feasible) return true;
  if (!a.feasible) return false;
  return a.recommended.instance_type != b.recommended.instance_type ||
         a.recommended.num_instances != b.recommended.num_instances ||
         a.recommended.configuration != b.recommended.configuration || a.currency != b.currency ||
         std::lround(a.recommended.cost_per_hour * 100) !=
             std::lround(b.recommended.cost_per_hour * 100);
}

}  // namespace

AnswerCard::AnswerCard(QWidget* parent) : QFrame(parent) {
  setObjectName("answerCard");
  setFrameShape(QFrame::StyledPanel);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 4, 8, 4);
  label_ = new QLabel(this);
  label_->setWordWrap(true);
  label_->setTextFormat(Qt::RichText);
  label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(label_);
  render();
}

void AnswerCard::show_answer(const plan::Answer& answer, bool full_run, bool searched_configs) {
  if (answer_ && changed(*answer_, answer)) before_ = answer_;  // else the last change stays
  answer_ = answer;
  full_run_ = full_run;
  searched_configs_ = searched_configs;
  render();
}

void AnswerCard::clear() {
  answer_.reset();
  before_.reset();
  render();
}

QString AnswerCard::text() const { return label_->text(); }

bool AnswerCard::has_translation(const char* source) { return tr(source) != QLatin1String(source); }

QString AnswerCard::binding_text(const plan::Answer& a) {
  // The planner writes this sentence in English (plan/ has no Qt); a translation is composed
  // from the answer's fields instead, and English keeps the planner's own, fuller sentence.
  const int margin = static_cast<int>(std::lround(100 * a.binding_margin));
  const QString metric =
      a.binding_constraint == "ttft" ? QStringLiteral("TTFT") : QStringLiteral("TPOT");
  if ((a.binding_constraint == "tpot" || a.binding_constraint == "ttft") &&
      has_translation("p99 %1 (%2% margin), the smallest fleet meeting the SLO")) {
    return tr("p99 %1 (%2% margin), the smallest fleet meeting the SLO").arg(metric).arg(margin);
  }
  if (a.binding_constraint == "kv_capacity" &&
      has_translation("KV cache capacity: requests preempted for want of KV blocks (%1% margin)")) {
    return tr("KV cache capacity: requests preempted for want of KV blocks (%1% margin)")
        .arg(margin);
  }
  if (a.binding_constraint == "none" &&
      has_translation("none, one instance suffices (%1% margin)")) {
    return tr("none, one instance suffices (%1% margin)").arg(margin);
  }
  return q(a.binding_text);
}

QString AnswerCard::other_kind_text(const plan::Answer& a) {
  const QString kind = a.other_kind == "cpu" ? QStringLiteral("CPU") : QStringLiteral("GPU");
  if (a.other_kind_cheapest &&
      has_translation("The cheapest %1 fleet, %2 × %3 at %4/hour, costs %5× as much.")) {
    return tr("The cheapest %1 fleet, %2 × %3 at %4/hour, costs %5× as much.")
        .arg(kind)
        .arg(a.other_kind_cheapest->num_instances)
        .arg(q(a.other_kind_cheapest->instance_type),
             money(a.currency, a.other_kind_cheapest->cost_per_hour))
        .arg(a.other_kind_cost_ratio, 0, 'f', 1);
  }
  if (!a.other_kind_cheapest &&
      has_translation("No %1 instance type meets the SLO (reasons in the table).")) {
    return tr("No %1 instance type meets the SLO (reasons in the table).").arg(kind);
  }
  return q(a.other_kind_text);
}

void AnswerCard::retranslate() { render(); }

void AnswerCard::render() {
  if (!answer_) {
    label_->setText(tr("<b>Answer:</b> run a plan to see the recommended fleet."));
    return;
  }
  const plan::Answer& a = *answer_;
  QString html;
  if (!a.feasible) {
    html = tr("<b>Answer:</b> %1").arg(q(a.headline));
  } else {
    const plan::AnswerOption& r = a.recommended;
    if (base::is_given_fleet_id(r.instance_type)) {  // a given fleet: its groups, its size
      html = tr("<b>Answer:</b> %1")
                 .arg("<b>" + q(base::sized_fleet(r.num_instances, r.instance_type)) + "</b> (" +
                      q(r.hardware_name) + "), " + q(r.configuration));
    } else {
      html = tr("<b>Answer: %1 × %2</b> (%3), %4")
                 .arg(r.num_instances)
                 .arg(q(r.instance_type), q(r.hardware_name), q(r.configuration));
    }
    html += "<br>" + tr("%1/hour (%2), %3/month, %4/year")
                         .arg(money(a.currency, r.cost_per_hour), q(r.price_model),
                              money(a.currency, a.cost_per_month, true),
                              money(a.currency, r.cost_per_year, true));
    if (a.has_range) {
      html += tr("; %1% range %2 to %3/hour")
                  .arg(static_cast<int>(std::lround(100 * a.confidence)))
                  .arg(money(a.currency, a.cost_per_hour_low),
                       a.cost_per_hour_high > 0 ? money(a.currency, a.cost_per_hour_high)
                                                : tr("no fleet"));
    }
    html += "<br>" + tr("Binding: %1").arg(binding_text(a));
    if (a.runner_up) {
      html += "<br>" + tr("Runner-up: %1 × %2 at %3/hour")
                           .arg(a.runner_up->num_instances)
                           .arg(q(a.runner_up->instance_type),
                                money(a.currency, a.runner_up->cost_per_hour));
    }
    if (!a.other_kind_text.empty()) html += "<br>" + other_kind_text(a);
  }
  if (!full_run_) {
    html += "<br><i>" +
            (searched_configs_ ? tr("Quick what-if: the configurations the last full run's search "
                                    "chose are kept where they apply; no analyses ran.")
                               : tr("Quick what-if: no analyses or search ran.")) +
            "</i>";
  }
  if (before_ && before_->feasible && a.feasible) {
    const double delta = a.recommended.cost_per_hour - before_->recommended.cost_per_hour;
    html += "<br>" + tr("Before: %1 × %2 at %3/hour; change %4%5/hour")
                         .arg(before_->recommended.num_instances)
                         .arg(q(before_->recommended.instance_type),
                              money(before_->currency, before_->recommended.cost_per_hour),
                              delta >= 0 ? "+" : "", money(a.currency, delta));
  } else if (before_ && before_->feasible != a.feasible) {
    html += "<br>" + tr("Before: %1").arg(q(before_->headline));
  }
  label_->setText(html);
}

}  // namespace llmcap::gui
