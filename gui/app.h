// llmcap-gui's command line (main.cpp is three lines): options, language, the main window, and
// the batch modes (--run --screenshot, --bench-slider).
#pragma once

#include <QString>
#include <QStringList>
#include <cstdint>
#include <optional>
#include <vector>

#include "plan/scenario.h"

namespace llmcap::gui {

/// The parsed command line.
struct AppArgs {
  QString scenario;     ///< --scenario FILE
  bool run = false;     ///< --run: a full plan once loaded
  QString screenshot;   ///< --screenshot FILE.png: render the window after loading (and running)
  QString lang = "en";  ///< --lang en|zh_CN
  QString data_dir;     ///< --data-dir (default $LLMCAP_DATA_DIR, else the source tree's data/)
  int threads = 0;      ///< --threads
  int64_t max_requests = plan::kDefaultMaxRequests;  ///< --max-requests
  bool analysis = true;  ///< --no-analysis turns the analyses of --run off
  bool store = true;     ///< --no-store: full runs are not stored in the results database
  /// --bench-slider 1.1,1.25,...: after the first run, what-if runs at these load multipliers
  /// one after another, each timing printed (slider release to first and last row).
  std::vector<double> bench_loads;
  /// --what-if KEY=VALUE (repeatable): after loading (and --run), the what-if controls set one
  /// after another, each run to its end: load=X (the load slider), gpu-weights=F,
  /// cpu-weights=F (the weight format lists), price-model=P, currency=C. Then --screenshot.
  std::vector<std::pair<QString, QString>> what_ifs;
  int width = 1920, height = 1080;  ///< --size WxH of the window (screenshots)
};

/// Parses `arguments` (QCoreApplication::arguments()). Returns nullopt and sets `error` to one
/// line naming the option and value for bad input.
std::optional<AppArgs> parse_app_args(const QStringList& arguments, QString* error);

/// The data folder (base::find_data_dir): `flag`, else $LLMCAP_DATA_DIR, else the installed
/// <bin>/../share/llmcap/data, else the source tree's data/ when run from its build tree.
/// Throws base::InputError naming every place tried when there is none.
QString resolve_data_dir(const QString& flag);

/// Runs the application; returns the exit code (2 for bad input in batch modes).
int run_app(int argc, char** argv);

}  // namespace llmcap::gui
