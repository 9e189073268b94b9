#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <streambuf>
#include <string>

#include "base/data_dir.h"
#include "base/error.h"
#include "base/text.h"
#include "cli/audit.h"
#include "cli/bench_sim.h"
#include "cli/calibrate_cmd.h"
#include "cli/catalog_cmd.h"
#include "cli/model_cmd.h"
#include "cli/models_cmd.h"
#include "cli/plan_cmd.h"
#include "cli/report_cmd.h"
#include "cli/runs_cmd.h"
#include "cli/serve_bench.h"
#include "cli/sweep_cmd.h"
#include "cli/validate_cmd.h"

namespace llmcap::cli {
namespace {

/// The data folder of a command (base::find_data_dir: --data-dir, $LLMCAP_DATA_DIR, the
/// installed share/llmcap/data beside the binary, the source tree's data/ from a build tree).
/// Throws base::InputError naming every place tried when there is none.
std::string resolve_data_dir(const std::string& flag) { return base::find_data_dir(flag).string(); }

/// What a command prints, passed on to `target` with every control character other than line
/// feed and tab, and every byte that is not UTF-8, written as base::printable escapes ("\x1b"):
/// names and messages from the user's files cannot move the cursor, recolour or clear the
/// terminal (docs/reports.md, Output escaping). A UTF-8 sequence split across two writes is held
/// until its end arrives.
class PrintableBuf : public std::streambuf {
 public:
  explicit PrintableBuf(std::ostream& target) : target_(target) {}
  PrintableBuf(const PrintableBuf&) = delete;
  PrintableBuf& operator=(const PrintableBuf&) = delete;
  ~PrintableBuf() override {
    target_ << base::printable(pending_, true);
    target_.flush();
  }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<size_t>(n));
    const size_t keep = incomplete_tail();
    target_ << base::printable(std::string_view(pending_).substr(0, pending_.size() - keep), true);
    pending_.erase(0, pending_.size() - keep);
    return n;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    xsputn(&ch, 1);
    return c;
  }
  int sync() override {
    target_.flush();
    return target_ ? 0 : -1;
  }

 private:
  /// Bytes at the end of pending_ that start a UTF-8 sequence not yet complete.
  size_t incomplete_tail() const {
    for (size_t back = 1; back <= 3 && back <= pending_.size(); ++back) {
      const auto b = static_cast<unsigned char>(pending_[pending_.size() - back]);
      if ((b & 0xC0) == 0x80) continue;  // a continuation byte: look further back
      const size_t length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
      return length > back ? back : 0;
    }
    return 0;
  }

  std::ostream& target_;
  std::string pending_;
};

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& raw_out, std::ostream& raw_err) {
  PrintableBuf out_buf(raw_out);
  PrintableBuf err_buf(raw_err);
  std::ostream out(&out_buf);
  std::ostream err(&err_buf);
  CLI::App app{"llmcap: capacity planning and cost simulation for LLM inference", "llmcap"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every command");
  app.set_version_flag("--version", std::string("llmcap ") + LLMCAP_VERSION);

  PlanArgs plan_args;  // `plan` (cli/plan_cmd.h)
  CLI::App* plan_cmd = add_plan_command(app, plan_args);

  CalibrateArgs cal_args;  // `calibrate` (cli/calibrate_cmd.h)
  CLI::App* cal_cmd = add_calibrate_command(app, cal_args);

  ValidateArgs val_args;  // `validate` (cli/validate_cmd.h)
  CLI::App* val_cmd = add_validate_command(app, val_args);

  BenchSimArgs bench_sim_args;
  CLI::App* bench_sim_cmd = add_bench_sim_command(app, bench_sim_args);

  ServeBenchArgs serve_bench_args;  // `serve-bench` (cli/serve_bench.h)
  CLI::App* serve_bench_cmd = add_serve_bench_command(app, serve_bench_args);

  AuditArgs audit_args;  // `audit` (cli/audit.h)
  CLI::App* audit_cmd = add_audit_command(app, audit_args);

  RunsArgs runs_args;  // `runs` (cli/runs_cmd.h)
  CLI::App* runs_cmd = add_runs_command(app, runs_args);
  SweepArgs sweep_args;  // `sweep` (cli/sweep_cmd.h)
  CLI::App* sweep_cmd = add_sweep_command(app, sweep_args);
  ReportArgs report_args;  // `report` (cli/report_cmd.h)
  CLI::App* report_cmd = add_report_command(app, report_args);
  ModelArgs model_args;  // `model` (cli/model_cmd.h)
  CLI::App* model_cmd = add_model_command(app, model_args);
  CatalogArgs catalog_args;  // `catalog` (cli/catalog_cmd.h)
  CLI::App* catalog_cmd = add_catalog_command(app, catalog_args);
  CatalogArgs instances_args;  // `instances` (cli/catalog_cmd.h)
  CLI::App* instances_cmd = add_instances_command(app, instances_args);
  ModelsArgs models_args;  // `models` (cli/models_cmd.h)
  CLI::App* models_cmd = add_models_command(app, models_args);

  std::string command_line = "llmcap";
  for (const std::string& arg : args) command_line += " " + arg;

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << (app.get_subcommands().empty() ? app.help()
                                          : app.get_subcommands().front()->help("llmcap"));
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    err << "llmcap: error: " << e.what() << " (see llmcap --help)\n";
    return kExitBadInput;
  }

  try {
    if (plan_cmd->parsed()) {
      return run_plan_command(plan_args, resolve_data_dir(plan_args.data_dir), command_line, out,
                              err);
    }
    if (runs_cmd->parsed()) {
      return run_runs_command(runs_args, runs_args.data_dir, out, err);  // no data read
    }
    if (sweep_cmd->parsed()) {
      return run_sweep_command(sweep_args, resolve_data_dir(sweep_args.data_dir), out, err);
    }
    if (report_cmd->parsed()) {
      return run_report_command(report_args, report_args.data_dir, out, err);  // no data read
    }
    if (model_cmd->parsed()) return run_model_command(model_args, out);
    if (models_cmd->parsed()) {
      return run_models_command(models_args, resolve_data_dir(models_args.data_dir), out);
    }
    if (instances_cmd->parsed()) {
      return run_instances_command(instances_args, resolve_data_dir(instances_args.data_dir), out);
    }
    if (catalog_cmd->parsed()) {
      return run_catalog_command(catalog_args, resolve_data_dir(catalog_args.data_dir), out);
    }
    if (audit_cmd->parsed()) {
      return run_audit_command(audit_args, resolve_data_dir(audit_args.data_dir), out);
    }
    if (val_cmd->parsed()) {
      return run_validate_command(val_args, resolve_data_dir(val_args.data_dir), command_line, out,
                                  err);
    }
    if (bench_sim_cmd->parsed()) {
      return run_bench_sim_command(bench_sim_args, resolve_data_dir(bench_sim_args.data_dir),
                                   command_line, out, err);
    }
    if (serve_bench_cmd->parsed()) {
      return run_serve_bench_command(serve_bench_args, resolve_data_dir(serve_bench_args.data_dir),
                                     command_line, out, err);
    }
    if (cal_cmd->parsed() && !cal_args.benchmark_files.empty()) {
      return run_calibrate_from_benchmark(cal_args, resolve_data_dir(cal_args.data_dir), out);
    }
    if (cal_cmd->parsed()) {
      return run_calibrate_command(cal_args, command_line, out, err);
    }
  } catch (const base::InputError& e) {  // model::, sim:: and plan::InputError are this type
    err << "llmcap: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {  // a kernel or decoder refusing its arguments
    err << "llmcap: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "llmcap: internal error: " << e.what() << "\n";
    return kExitInternalError;
  }
  return kExitInternalError;
}

}  // namespace llmcap::cli
