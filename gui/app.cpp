#include "gui/app.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QHashFunctions>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "base/data_dir.h"
#include "base/error.h"
#include "gui/language.h"
#include "gui/main_window.h"

namespace llmcap::gui {

QString resolve_data_dir(const QString& flag) {
  return QString::fromStdString(base::find_data_dir(flag.toStdString()).string());
}

std::optional<AppArgs> parse_app_args(const QStringList& arguments, QString* error) {
  QCommandLineParser p;
  p.setApplicationDescription("llmcap-gui: what-if capacity planning for LLM inference");
  p.addHelpOption();
  const QCommandLineOption scenario("scenario", "Scenario file to open.", "FILE");
  const QCommandLineOption run("run", "Run a full plan once the scenario is loaded.");
  const QCommandLineOption screenshot("screenshot",
                                      "Render the main window to FILE.png (after --run: once "
                                      "the run ends) and exit.",
                                      "FILE.png");
  const QCommandLineOption lang("lang", "Language: en or zh_CN.", "LANG", "en");
  const QCommandLineOption data_dir("data-dir",
                                    "Catalog folder (default: $LLMCAP_DATA_DIR, else "
                                    "<bin>/../share/llmcap/data when installed, else the "
                                    "source tree's data/ when run from its build tree).",
                                    "DIR");
  const QCommandLineOption threads("threads", "Planner threads (0: all CPUs).", "N", "0");
  const QCommandLineOption max_requests(
      "max-requests",
      "The most requests a run's workload may have; a larger one is refused before any "
      "simulation (as llmcap plan --max-requests).",
      "N", QString::number(plan::kDefaultMaxRequests));
  const QCommandLineOption no_analysis("no-analysis", "Full runs without the analyses.");
  const QCommandLineOption no_store("no-store", "Do not store full runs in the results database.");
  const QCommandLineOption bench("bench-slider",
                                 "After the first run, what-if runs at these load multipliers "
                                 "(comma-separated); print each one's times and exit.",
                                 "LOADS");
  const QCommandLineOption size("size", "Window size for screenshots.", "WxH", "1920x1080");
  const QCommandLineOption what_if(
      "what-if",
      "After loading (and --run), set a what-if control and run it (repeatable, in order): "
      "load=X, gpu-weights=FORMAT, cpu-weights=FORMAT, price-model=NAME or currency=CODE.",
      "KEY=VALUE");
  p.addOptions({scenario, run, screenshot, lang, data_dir, threads, max_requests, no_analysis,
                no_store, bench, size, what_if});
  if (!p.parse(arguments)) {
    *error = p.errorText();
    return std::nullopt;
  }
  if (p.isSet("help")) {
    std::fputs(qPrintable(p.helpText()), stdout);
    std::exit(0);
  }
  AppArgs a;
  a.scenario = p.value(scenario);
  a.run = p.isSet(run);
  a.screenshot = p.value(screenshot);
  a.lang = p.value(lang);
  if (!Language::codes().contains(a.lang)) {
    *error = QStringLiteral("option --lang: expected one of %1, got \"%2\"")
                 .arg(Language::codes().join(", "), a.lang);
    return std::nullopt;
  }
  a.data_dir = p.value(data_dir);
  bool ok = false;
  a.threads = p.value(threads).toInt(&ok);
  if (!ok || a.threads < 0) {
    *error = QStringLiteral("option --threads: expected a non-negative integer, got \"%1\"")
                 .arg(p.value(threads));
    return std::nullopt;
  }
  a.max_requests = p.value(max_requests).toLongLong(&ok);
  if (!ok || a.max_requests < 1 || a.max_requests > 1'000'000'000'000) {
    *error = QStringLiteral("option --max-requests: expected an integer in [1, 1e12], got \"%1\"")
                 .arg(p.value(max_requests));
    return std::nullopt;
  }
  a.analysis = !p.isSet(no_analysis);
  a.store = !p.isSet(no_store);
  if (p.isSet(bench)) {
    for (const QString& part : p.value(bench).split(',', Qt::SkipEmptyParts)) {
      const double v = part.trimmed().toDouble(&ok);
      if (!ok || !(v > 0)) {
        *error = QStringLiteral(
                     "option --bench-slider: expected positive load multipliers "
                     "separated by commas, got \"%1\"")
                     .arg(part);
        return std::nullopt;
      }
      a.bench_loads.push_back(v);
    }
  }
  for (const QString& item : p.values(what_if)) {
    const qsizetype eq = item.indexOf('=');
    const QString key = eq > 0 ? item.left(eq) : QString();
    const QString value = eq > 0 ? item.mid(eq + 1) : QString();
    static const QStringList kKeys = {"load", "gpu-weights", "cpu-weights", "price-model",
                                      "currency"};
    if (!kKeys.contains(key) || value.isEmpty() || (key == "load" && !(value.toDouble() > 0))) {
      *error = QStringLiteral(
                   "option --what-if: expected load=X (X > 0), gpu-weights=FORMAT, "
                   "cpu-weights=FORMAT, price-model=NAME or currency=CODE, got \"%1\"")
                   .arg(item);
      return std::nullopt;
    }
    a.what_ifs.emplace_back(key, value);
  }
  const QStringList wh = p.value(size).split('x');
  bool ok_w = false, ok_h = false;
  if (wh.size() == 2) {
    a.width = wh[0].toInt(&ok_w);
    a.height = wh[1].toInt(&ok_h);
  }
  if (!ok_w || !ok_h || a.width < 200 || a.height < 200) {
    *error = QStringLiteral("option --size: expected WIDTHxHEIGHT of at least 200x200, got \"%1\"")
                 .arg(p.value(size));
    return std::nullopt;
  }
  if (!a.screenshot.isEmpty() && a.scenario.isEmpty()) {
    *error = QStringLiteral("option --screenshot: needs --scenario FILE");
    return std::nullopt;
  }
  return a;
}

int run_app(int argc, char** argv) {
  // A fixed hash seed: exported PDFs are the same bytes from one session to the next
  // (report/pdf_writer.cpp says why).
  QHashSeed::setDeterministicGlobalSeed();
  QApplication app(argc, argv);
  QCoreApplication::setOrganizationName("llmcap");
  QCoreApplication::setApplicationName("llmcap-gui");
  QString error;
  const std::optional<AppArgs> args = parse_app_args(QCoreApplication::arguments(), &error);
  if (!args) {
    std::fprintf(stderr, "llmcap-gui: %s\n", qPrintable(error));
    return 2;
  }
  auto* language = new Language(&app);
  if (!language->set(args->lang)) {
    std::fprintf(stderr, "llmcap-gui: the %s translation could not be loaded\n",
                 qPrintable(args->lang));
  }
  MainWindow::Options options;
  try {
    options.data_dir = resolve_data_dir(args->data_dir).toStdString();
  } catch (const base::InputError& e) {
    std::fprintf(stderr, "llmcap-gui: %s\n", e.what());
    return 2;
  }
  options.num_threads = args->threads;
  options.store_runs = args->store;
  options.max_requests = args->max_requests;
  MainWindow window(options, language);
  window.resize(args->width, args->height);
  window.show();

  const bool batch = !args->screenshot.isEmpty() || !args->bench_loads.empty();
  size_t what_if_next = 0;
  // Sets the next --what-if control (the window then runs the what-if).
  const auto apply_what_if = [&window, &args, &what_if_next] {
    const auto& [key, value] = args->what_ifs[what_if_next++];
    if (key == "load") {
      window.set_load_multiplier(value.toDouble());
    } else if (key == "gpu-weights") {
      window.set_weight_format(QStringLiteral("gpu"), value);
    } else if (key == "cpu-weights") {
      window.set_weight_format(QStringLiteral("cpu"), value);
    } else if (key == "price-model") {
      window.set_price_model(value);
    } else {
      window.set_currency(value);
    }
  };
  if (!args->scenario.isEmpty() && !window.open_scenario(args->scenario)) {
    if (batch) {
      std::fprintf(stderr, "llmcap-gui: %s\n", qPrintable(window.status_text()));
      return 2;
    }
  }
  int exit_code = 0;
  auto take_screenshot = [&] {
    QTimer::singleShot(300, &window, [&] {
      const QPixmap shot = window.grab();
      if (shot.isNull() || !shot.save(args->screenshot, "PNG")) {
        std::fprintf(stderr, "llmcap-gui: %s: cannot write the screenshot\n",
                     qPrintable(args->screenshot));
        exit_code = 1;
      } else {
        std::fprintf(stderr, "llmcap-gui: wrote %s\n", qPrintable(args->screenshot));
      }
      QApplication::exit(exit_code);
    });
  };
  size_t bench_next = 0;
  QObject::connect(&window, &MainWindow::runFinished, &window, [&](bool ok, bool) {
    if (!ok) {
      std::fprintf(stderr, "llmcap-gui: %s\n", qPrintable(window.status_text()));
      if (batch) {
        exit_code = 2;
        QApplication::exit(2);
      }
      return;
    }
    if (const auto& t = window.last_timing()) {
      std::printf(
          "%s load %.2fx: first row %.3f s, first feasible row %.3f s, last row %.3f s, "
          "%zu rows, %lld simulations\n",
          t->full_run ? "full-run" : "what-if", t->load_multiplier, t->first_row_s,
          t->first_feasible_row_s, t->last_row_s, t->num_rows,
          static_cast<long long>(t->num_simulations));
      std::fflush(stdout);
    }
    if (bench_next < args->bench_loads.size()) {
      const double load = args->bench_loads[bench_next++];
      QTimer::singleShot(0, &window, [&window, load] { window.set_load_multiplier(load); });
      return;
    }
    if (what_if_next < args->what_ifs.size()) {
      QTimer::singleShot(0, &window, apply_what_if);
      return;
    }
    if (!args->screenshot.isEmpty()) {
      take_screenshot();
    } else if (batch) {
      QApplication::exit(exit_code);
    }
  });
  if (!args->scenario.isEmpty()) {
    if (args->run) {
      window.run_full(args->analysis);
    } else if (!args->bench_loads.empty()) {
      window.set_load_multiplier(1.0);
    } else if (!args->what_ifs.empty()) {
      apply_what_if();
    } else if (!args->screenshot.isEmpty()) {
      take_screenshot();
    }
  }
  return app.exec();
}

}  // namespace llmcap::gui
