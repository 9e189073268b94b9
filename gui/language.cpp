#include "gui/language.h"

#include <QCoreApplication>

namespace llmcap::gui {

Language::Language(QObject* parent) : QObject(parent), translator_(this) {}

QStringList Language::codes() { return {"en", "zh_CN"}; }

QString Language::native_name(const QString& code) {
  if (code == "zh_CN") return QString::fromUtf8("简体中文");
  return QStringLiteral("English");
}

bool Language::set(const QString& code) {
  if (!codes().contains(code)) return false;
  if (code == current_) return true;
  if (installed_) {
    QCoreApplication::removeTranslator(&translator_);
    installed_ = false;
  }
  if (code != "en") {
    if (!translator_.load(QStringLiteral(":/i18n/llmcap_gui_") + code + QStringLiteral(".qm"))) {
      current_ = "en";
      return false;
    }
    QCoreApplication::installTranslator(&translator_);
    installed_ = true;
  }
  current_ = code;
  return true;
}

}  // namespace llmcap::gui
