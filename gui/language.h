// Languages switchable at run time: English (the source strings) and Simplified Chinese
// (gui/translations/*.ts, compiled into the binary). Installing a translator sends
// QEvent::LanguageChange to every widget, whose changeEvent calls its retranslateUi().
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTranslator>

namespace llmcap::gui {

class Language : public QObject {
  Q_OBJECT

 public:
  explicit Language(QObject* parent);

  /// "en" or "zh_CN". Returns false (and keeps the current language) for another code or a
  /// translation that cannot be loaded.
  bool set(const QString& code);
  QString current() const { return current_; }
  /// The codes offered: "en", "zh_CN".
  static QStringList codes();
  /// The language's own name ("English", "简体中文").
  static QString native_name(const QString& code);

 private:
  QTranslator translator_;
  bool installed_ = false;
  QString current_ = "en";
};

}  // namespace llmcap::gui
