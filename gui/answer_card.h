// The answer card above the results table (issue 30, items 1 and 8): the run's plan::Answer (the
// same figures as the CLI's first lines and the report's page 1), and what changed against the
// answer shown before it when a what-if moves it.
#pragma once

#include <QFrame>
#include <optional>

#include "plan/answer.h"

class QLabel;

namespace llmcap::gui {

class AnswerCard : public QFrame {
  Q_OBJECT

 public:
  explicit AnswerCard(QWidget* parent = nullptr);

  /// Shows `answer`. `full_run`: the analyses ran (range, runner-up of the search); a what-if
  /// answer says it is from the quick replan. When the recommended fleet or its cost differs
  /// from the answer shown before, a "before" line gives the previous fleet and cost and the
  /// change.
  /// `searched_configs`: a what-if planned each type at the last full run's search winner.
  void show_answer(const plan::Answer& answer, bool full_run, bool searched_configs = false);
  /// Empties the card (a new scenario).
  void clear();
  /// The card's text as shown (tests, screenshots).
  QString text() const;
  void retranslate();

 private:
  void render();
  /// The planner's English sentences (Answer::binding_text, other_kind_text), or, where the
  /// language translates it, one composed from the answer's fields.
  static QString binding_text(const plan::Answer& a);
  static QString other_kind_text(const plan::Answer& a);
  /// Whether the current language translates `source` (English does not).
  static bool has_translation(const char* source);

  QLabel* label_;
  std::optional<plan::Answer> answer_;
  std::optional<plan::Answer> before_;
  bool full_run_ = false;
  bool searched_configs_ = false;  ///< a what-if at the last full run's search winners
};

}  // namespace llmcap::gui
