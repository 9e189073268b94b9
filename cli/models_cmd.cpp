#include "cli/models_cmd.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "base/error.h"
#include "base/text.h"
#include "cli/cli.h"
#include "cli/text_layout.h"
#include "model/model_description.h"

namespace llmcap::cli {
namespace fs = std::filesystem;

CLI::App* add_models_command(CLI::App& app, ModelsArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "models",
      "List the model ids a scenario's \"model\" may name (data/models, docs/scenarios.md)");
  cmd->add_option("--data-dir", args.data_dir, "Data folder (default: found beside the binary)")
      ->option_text("DIR");
  add_width_option(cmd, args.width);
  return cmd;
}

int run_models_command(const ModelsArgs& args, const std::string& data_dir, std::ostream& out) {
  const fs::path models = fs::path(data_dir) / "models";
  std::error_code ec;
  if (!fs::is_directory(models, ec)) {
    throw base::InputError(models.string() + ": no models folder (expected <data-dir>/models)");
  }
  std::vector<fs::path> files;
  for (const fs::path& dir : {models, models / "families"}) {
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    return a.stem().string() < b.stem().string();
  });
  std::vector<std::vector<std::string>> cells = {
      {"id", "model type", "params B", "active B", "context", "file"}};
  std::string errors;
  int code = kExitOk;
  for (const fs::path& f : files) {
    const std::string shown = fs::relative(f, data_dir, ec).string();
    try {
      const model::ModelDescription d = model::load_model_description(f);
      cells.push_back({base::printable(f.stem().string()), base::printable(d.model_type),
                       base::fixed(static_cast<double>(d.num_params()) / 1e9, 1),
                       base::fixed(static_cast<double>(d.num_active_params()) / 1e9, 1),
                       base::grouped(static_cast<double>(d.max_position_embeddings), 0),
                       base::printable(shown)});
    } catch (const std::exception& e) {
      errors += base::printable(f.stem().string()) + ": cannot read (" + base::printable(e.what()) +
                ")\n";
      code = kExitBadInput;
    }
  }
  const size_t width = output_width(args.width);
  out << fit_to_width(
      format_table(cells, {false, false, true, true, true, false}, {5, 0}, width) + errors, width);
  return code;
}

}  // namespace llmcap::cli
