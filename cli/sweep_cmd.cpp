#include "cli/sweep_cmd.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "base/error.h"
#include "cli/cli.h"
#include "cli/plan_run.h"
#include "cli/runs_cmd.h"
#include "model/calibration.h"
#include "model/hardware.h"
#include "model/input_error.h"
#include "plan/scenario.h"
#include "sim/input_error.h"
#include "store/results_store.h"

#ifdef LLMCAP_HAVE_MPI
#include <mpi.h>
#endif

namespace llmcap::cli {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr int64_t kMaxPoints = 100000;

#ifdef LLMCAP_HAVE_MPI
constexpr bool kBuiltWithMpi = true;
#else
constexpr bool kBuiltWithMpi = false;
#endif  // a grid larger than this is almost surely a mistake

std::string in_quotes(const std::string& text) { return "\"" + text + "\""; }

std::string read_text_or_throw(const std::filesystem::path& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw plan::InputError(what + ": cannot open " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// 64-bit FNV-1a (Fowler, Noll, Vo): a stable hash, the same on every platform and build.
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex16(uint64_t v) {
  std::ostringstream s;
  s << std::hex << std::setw(16) << std::setfill('0') << v;
  return s.str();
}

/// A value as shown in tables and labels: strings without quotes, the rest as compact JSON.
std::string shown(const ordered_json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

/// Sets the dotted `field` of `doc` to `value`, creating missing objects on the way. Throws
/// InputError naming the sweep file and the grid field when the path crosses a non-object.
void set_field(ordered_json& doc, const std::string& field, const ordered_json& value,
               const std::string& file) {
  const std::string grid_field = "grid." + field;
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(field);
  while (std::getline(in, part, '.')) parts.push_back(part);
  if (parts.empty() || field.back() == '.' ||
      std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
    throw base::InputError::bad_field(
        file, grid_field, in_quotes(field),
        "a dotted scenario field like " + in_quotes("slo.tpot_p99_s"));
  }
  ordered_json* node = &doc;
  std::string walked;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    const bool last = i + 1 == parts.size();
    if (node->is_array()) {
      const bool digits =
          std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || p.size() > 9 || std::stoul(p) >= node->size()) {
        throw base::InputError::refused_field(
            file, grid_field,
            in_quotes(walked) + " is a list of " + std::to_string(node->size()) +
                " entries, expected an index below " + std::to_string(node->size()) + ", got " +
                in_quotes(p));
      }
      node = &(*node)[std::stoul(p)];
    } else if (node->is_object()) {
      if (last) {
        (*node)[p] = value;
        return;
      }
      if (!node->contains(p)) (*node)[p] = ordered_json::object();
      node = &(*node)[p];
    } else {
      throw base::InputError::refused_field(
          file, grid_field,
          "the scenario's " + in_quotes(walked) + " is " + node->dump() +
              ", not an object or list, so it has no field " + in_quotes(p));
    }
    walked += (walked.empty() ? "" : ".") + p;
    if (last) *node = value;
  }
}

/// The value of a sweep file's key, checked by type.
const ordered_json& member(const ordered_json& doc, const std::string& key, const std::string& file,
                           bool (ordered_json::*is_type)() const noexcept, const char* expected) {
  const ordered_json& v = doc.at(key);
  if (!(v.*is_type)()) {
    throw base::InputError::bad_field(file, key, v.dump(), expected);
  }
  return v;
}

}  // namespace

SweepSpec load_sweep(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw plan::InputError(file + ": cannot open the sweep file");
  std::ostringstream text;
  text << in.rdbuf();
  ordered_json doc;
  try {
    doc = ordered_json::parse(text.str());
  } catch (const ordered_json::parse_error& e) {
    throw base::InputError::malformed_json(file, e.what());
  }
  if (!doc.is_object()) {
    throw base::InputError::bad_document(file, "a JSON object at the top level");
  }
  const std::vector<std::string> known = {"name", "scenario", "grid", "analysis", "profile"};
  for (const auto& [key, value] : doc.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw base::InputError::refused_field(
          file, key, "unknown field; expected one of name, scenario, grid, analysis, profile");
    }
  }
  for (const char* required : {"scenario", "grid"}) {
    if (!doc.contains(required)) {
      throw base::InputError::refused_field(file, required, "missing (required)");
    }
  }

  SweepSpec spec;
  spec.file = path;
  spec.name = path.stem().string();
  if (doc.contains("name")) {
    spec.name = member(doc, "name", file, &ordered_json::is_string, "a non-empty string")
                    .get<std::string>();
    if (spec.name.empty()) {
      throw base::InputError::bad_field(file, "name", "\"\"", "a non-empty string");
    }
  }
  const std::filesystem::path folder = path.parent_path();
  spec.scenario_path =
      (folder / member(doc, "scenario", file, &ordered_json::is_string, "a scenario file path")
                    .get<std::string>())
          .lexically_normal();
  if (doc.contains("analysis")) {
    spec.analysis =
        member(doc, "analysis", file, &ordered_json::is_boolean, "true or false").get<bool>();
  }
  std::string profile_text;
  if (doc.contains("profile")) {
    spec.profile_path =
        (folder / member(doc, "profile", file, &ordered_json::is_string, "a profile file path")
                      .get<std::string>())
            .lexically_normal();
    profile_text = read_text_or_throw(spec.profile_path, file + ": field \"profile\"");
    model::read_profile_json(spec.profile_path);  // checks it (model::InputError)
  }

  // The base scenario: read and checked as it is.
  const std::string base_text =
      read_text_or_throw(spec.scenario_path, file + ": field \"scenario\"");
  plan::load_scenario_text(base_text, spec.scenario_path);
  const ordered_json base = ordered_json::parse(base_text);
  spec.sweep_id =
      spec.name + "-" +
      hex16(fnv1a(json::parse(base_text).dump() + "\nanalysis=" + (spec.analysis ? "1" : "0") +
                  "\nprofile=" + profile_text));

  const ordered_json& grid =
      member(doc, "grid", file, &ordered_json::is_object, "an object of field: [values]");
  if (grid.empty()) {
    throw base::InputError::bad_field(file, "grid", "{}", "at least one field with values");
  }
  int64_t num_points = 1;
  for (const auto& [field, values] : grid.items()) {
    const std::string grid_field = "grid." + field;
    if (!values.is_array() || values.empty()) {
      throw base::InputError::bad_field(file, grid_field, values.dump(),
                                        "a non-empty list of values");
    }
    for (size_t i = 0; i < values.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (values[i] == values[j]) {
          throw base::InputError::refused_field(
              file, grid_field,
              "value " + values[i].dump() + " appears twice; expected distinct values");
        }
      }
    }
    // A field the scenario reader does not read would be ignored silently: probe it with a
    // value no field accepts (a list holding a list); a field that is read refuses it.
    ordered_json probe = base;
    set_field(probe, field, ordered_json::array({ordered_json::array()}), file);
    bool read = false;
    try {
      plan::load_scenario_text(probe.dump(), spec.scenario_path);
    } catch (const std::exception&) {
      read = true;
    }
    if (!read) {
      throw base::InputError::refused_field(
          file, grid_field,
          "the scenario " + spec.scenario_path.string() + " does not read " + in_quotes(field) +
              " (unknown field, or one its workload kind ignores); expected a scenario field "
              "(docs/scenarios.md)");
    }
    for (const ordered_json& value : values) {
      ordered_json one = base;
      set_field(one, field, value, file);
      try {
        plan::load_scenario_text(one.dump(), spec.scenario_path);
      } catch (const plan::InputError& e) {
        throw base::InputError::refused_field(
            file, grid_field,
            "value " + value.dump() + " refused by the scenario reader: " + e.what());
      }
    }
    spec.fields.push_back(field);
    num_points *= static_cast<int64_t>(values.size());
    if (num_points > kMaxPoints) {
      throw base::InputError::refused_field(
          file, "grid",
          std::to_string(num_points) + "+ points, expected at most " + std::to_string(kMaxPoints));
    }
  }

  // The cartesian product, the last field varying fastest.
  std::vector<size_t> at(spec.fields.size(), 0);
  for (int64_t n = 0; n < num_points; ++n) {
    SweepPoint point;
    ordered_json scenario = base;
    json key = json::object();
    for (size_t f = 0; f < spec.fields.size(); ++f) {
      const ordered_json& value = grid.at(spec.fields[f])[at[f]];
      set_field(scenario, spec.fields[f], value, file);
      key[spec.fields[f]] = json::parse(value.dump());
      point.values.emplace_back(spec.fields[f], value.dump());
      point.label += (f == 0 ? "" : " ") + spec.fields[f] + "=" + shown(value);
    }
    point.key = key.dump();
    point.scenario_json = scenario.dump(2);
    try {
      plan::load_scenario_text(point.scenario_json, spec.scenario_path);
    } catch (const plan::InputError& e) {
      throw plan::InputError(file + ": point " + point.label +
                             ": refused by the scenario reader: " + e.what());
    }
    spec.points.push_back(std::move(point));
    for (size_t f = spec.fields.size(); f-- > 0;) {
      if (++at[f] < grid.at(spec.fields[f]).size()) break;
      at[f] = 0;
    }
  }
  return spec;
}

namespace {

/// What one point produced: its run document, or why it failed.
struct Outcome {
  size_t index = 0;        ///< into SweepSpec::points
  std::string document;    ///< JSON text (success)
  std::string error;       ///< non-empty on failure
  bool bad_input = false;  ///< the failure is bad input (exit 2), not an internal error
  int rank = 0;            ///< MPI rank that computed it
};

/// Everything a process needs to plan points.
struct PointRunner {
  const SweepSpec& spec;
  const model::Catalog& catalog;
  const model::CalibrationProfile* profile;
  int threads;

  Outcome run(size_t index) const {
    Outcome o;
    o.index = index;
    try {
      const plan::Scenario scenario =
          plan::load_scenario_text(spec.points[index].scenario_json, spec.scenario_path);
      PlanRunOptions options;
      options.plan.num_threads = threads;
      options.plan.calibration = profile;
      options.analysis = spec.analysis;
      o.document = make_plan_run(scenario, catalog, options).document.dump();
    } catch (const base::InputError& e) {  // model::, sim:: and plan::InputError are this type
      o.error = e.what();
      o.bad_input = true;
    } catch (const std::exception& e) {
      o.error = e.what();
    }
    return o;
  }
};

/// Hands out the pending points (to local threads and, under MPI, to other ranks), writes each
/// finished one to the database, and remembers the first failure (after which no point is
/// handed out). Only the thread that constructed it calls handle().
class Coordinator {
 public:
  Coordinator(const SweepSpec& spec, store::ResultsStore& db, std::vector<size_t> pending,
              std::string command_line, bool quiet, std::ostream& err)
      : spec_(spec),
        db_(db),
        pending_(std::move(pending)),
        command_line_(std::move(command_line)),
        quiet_(quiet),
        err_(err) {}

  /// The next point to run, or nullopt when none is left or the sweep stops.
  std::optional<size_t> take_next() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_ || next_ >= pending_.size()) return std::nullopt;
    return pending_[next_++];
  }

  /// Writes a finished point (or records its failure) and prints its progress line.
  void handle(const Outcome& o) {
    const SweepPoint& point = spec_.points[o.index];
    if (o.error.empty()) {
      try {
        store::RunRecord record;
        record.kind = "sweep_point";
        record.name = spec_.name;
        record.command_line = command_line_;
        record.input_json = point.scenario_json;
        record.document_json = o.document;
        record.summary = point.label + ": " + summarize_plan_document(json::parse(o.document));
        record.sweep_id = spec_.sweep_id;
        record.point_key = point.key;
        const int64_t id = db_.add_run(record);
        ++num_done_;
        if (!quiet_) {
          err_ << "  [" << num_done_ << "/" << pending_.size() << "] " << record.summary << " (run "
               << id << (o.rank > 0 ? ", rank " + std::to_string(o.rank) : "") << ")\n";
        }
        return;
      } catch (const std::exception& e) {
        fail({o.index, "", std::string("cannot store the point: ") + e.what(), false, o.rank});
        return;
      }
    }
    fail(o);
  }

  size_t num_done() const { return num_done_; }
  size_t num_pending() const { return pending_.size(); }
  const std::optional<Outcome>& failure() const { return failure_; }

 private:
  void fail(const Outcome& o) {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    if (!failure_) failure_ = o;
  }

  const SweepSpec& spec_;
  store::ResultsStore& db_;
  std::vector<size_t> pending_;
  std::string command_line_;
  bool quiet_;
  std::ostream& err_;
  std::mutex mutex_;
  size_t next_ = 0;
  bool stop_ = false;
  size_t num_done_ = 0;
  std::optional<Outcome> failure_;
};

/// Finished points of local worker threads, handed to the coordinating thread.
class OutcomeQueue {
 public:
  void push(Outcome o) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(o));
    }
    changed_.notify_one();
  }
  void worker_done() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++num_workers_done_;
    }
    changed_.notify_one();
  }
  /// Everything queued now; waits up to `wait` for something when empty.
  std::deque<Outcome> take(std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, wait, [&] { return !queue_.empty() || num_workers_done_ > seen_; });
    seen_ = num_workers_done_;
    std::deque<Outcome> out;
    out.swap(queue_);
    return out;
  }
  int num_workers_done() {
    std::lock_guard<std::mutex> lock(mutex_);
    return num_workers_done_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Outcome> queue_;
  int num_workers_done_ = 0;
  int seen_ = 0;
};

/// Starts `n` threads that run points from `coordinator` until none is left.
std::vector<std::thread> start_workers(int n, Coordinator& coordinator, const PointRunner& runner,
                                       OutcomeQueue& queue) {
  std::vector<std::thread> workers;
  for (int i = 0; i < n; ++i) {
    workers.emplace_back([&] {
      while (const std::optional<size_t> index = coordinator.take_next()) {
        queue.push(runner.run(*index));
      }
      queue.worker_done();
    });
  }
  return workers;
}

/// Runs the pending points on `num_jobs` local threads, writing each as it finishes.
void run_local(Coordinator& coordinator, const PointRunner& runner, int num_jobs) {
  OutcomeQueue queue;
  std::vector<std::thread> workers = start_workers(num_jobs, coordinator, runner, queue);
  while (true) {
    const bool all_done = queue.num_workers_done() == num_jobs;
    for (const Outcome& o : queue.take(std::chrono::milliseconds(200))) coordinator.handle(o);
    if (all_done) break;
  }
  for (std::thread& t : workers) t.join();
  for (const Outcome& o : queue.take(std::chrono::milliseconds(0))) coordinator.handle(o);
}

/// The MPI world this process belongs to, when mpirun (Open MPI, MPICH/Hydra, PMIx) started it.
int mpi_size_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return std::atoi(v);
  }
  if (std::getenv("PMIX_RANK") != nullptr) return 2;  // PMIx without a size: assume several
  return 0;
}

#ifdef LLMCAP_HAVE_MPI

constexpr int kTagReady = 1;   // worker -> 0: ready for a point (no payload)
constexpr int kTagWork = 2;    // 0 -> worker: int64 point index, -1 = stop
constexpr int kTagResult = 3;  // worker -> 0: int64 index, then the document text
constexpr int kTagError = 4;   // worker -> 0: int64 index, 1 byte bad_input, message text

/// MPI_Init on construction (when nobody did), MPI_Finalize on destruction.
class MpiSession {
 public:
  MpiSession() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      owner_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiSession() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owner_ && !finalized) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  bool owner_ = false;
  int rank_ = 0;
  int size_ = 1;
};

std::string pack(int64_t index, const std::string& text) {
  std::string bytes(sizeof(index), '\0');
  std::memcpy(bytes.data(), &index, sizeof(index));
  return bytes + text;
}

void send_bytes(const std::string& bytes, int dest, int tag) {
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

/// A rank other than 0: asks for points, plans them, sends the documents back, until told to
/// stop.
void run_mpi_worker(const PointRunner& runner, int rank) {
  MPI_Send(nullptr, 0, MPI_CHAR, 0, kTagReady, MPI_COMM_WORLD);
  while (true) {
    int64_t index = -1;
    MPI_Recv(&index, 1, MPI_INT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (index < 0) return;
    Outcome o = runner.run(static_cast<size_t>(index));
    o.rank = rank;
    if (o.error.empty()) {
      send_bytes(pack(index, o.document), 0, kTagResult);
    } else {
      send_bytes(pack(index, std::string(1, o.bad_input ? '1' : '0') + o.error), 0, kTagError);
    }
  }
}

/// Rank 0: one local worker thread plus the other ranks, all fed from `coordinator`; this
/// thread alone calls MPI and writes the database.
void run_mpi_root(Coordinator& coordinator, const PointRunner& runner, int size) {
  OutcomeQueue queue;
  std::vector<std::thread> workers = start_workers(1, coordinator, runner, queue);
  int remote_active = size - 1;
  bool local_active = true;
  while (remote_active > 0 || local_active) {
    local_active = queue.num_workers_done() < 1;
    bool busy = false;
    for (const Outcome& o : queue.take(std::chrono::milliseconds(0))) {
      coordinator.handle(o);
      busy = true;
    }
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (flag) {
      busy = true;
      int count = 0;
      MPI_Get_count(&status, MPI_CHAR, &count);
      std::string bytes(static_cast<size_t>(count), '\0');
      MPI_Recv(bytes.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      if (status.MPI_TAG == kTagResult || status.MPI_TAG == kTagError) {
        Outcome o;
        int64_t index = 0;
        std::memcpy(&index, bytes.data(), sizeof(index));
        o.index = static_cast<size_t>(index);
        o.rank = status.MPI_SOURCE;
        if (status.MPI_TAG == kTagResult) {
          o.document = bytes.substr(sizeof(index));
        } else {
          o.bad_input = bytes[sizeof(index)] == '1';
          o.error = bytes.substr(sizeof(index) + 1);
        }
        coordinator.handle(o);
      }
      const std::optional<size_t> next = coordinator.take_next();
      const int64_t reply = next ? static_cast<int64_t>(*next) : -1;
      MPI_Send(&reply, 1, MPI_INT64_T, status.MPI_SOURCE, kTagWork, MPI_COMM_WORLD);
      if (reply < 0) --remote_active;
    }
    if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (std::thread& t : workers) t.join();
  for (const Outcome& o : queue.take(std::chrono::milliseconds(0))) coordinator.handle(o);
}

#endif  // LLMCAP_HAVE_MPI

/// The cheapest feasible row of a run document, or nullptr.
const json* cheapest_row(const json& doc) {
  const json* best = nullptr;
  if (!doc.contains("results") || !doc["results"].is_array()) return nullptr;
  for (const json& row : doc["results"]) {
    if (!row.value("feasible", false) || !row["usd_per_hour"].is_number()) continue;
    if (best == nullptr ||
        row["usd_per_hour"].get<double>() < (*best)["usd_per_hour"].get<double>()) {
      best = &row;
    }
  }
  return best;
}

/// The table of all the sweep's points (stored now or earlier), in grid order.
void print_points(const SweepSpec& spec, const store::ResultsStore& db, std::ostream& out) {
  const std::map<std::string, int64_t> stored = db.sweep_points(spec.sweep_id);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"run"};
  for (const std::string& f : spec.fields) header.push_back(f);
  for (const char* h : {"cheapest", "count", "USD/hour", "feasible"}) header.push_back(h);
  rows.push_back(header);
  for (const SweepPoint& point : spec.points) {
    std::vector<std::string> row;
    const auto it = stored.find(point.key);
    row.push_back(it == stored.end() ? "-" : std::to_string(it->second));
    for (const auto& [field, value] : point.values) {
      const json v = json::parse(value);
      row.push_back(v.is_string() ? v.get<std::string>() : value);
    }
    if (it == stored.end()) {
      for (int i = 0; i < 3; ++i) row.push_back("-");
      row.push_back("not run");
    } else {
      const json doc = json::parse(db.get_run(it->second).document_json);
      const json* best = cheapest_row(doc);
      int num_feasible = 0;
      for (const json& r : doc["results"]) num_feasible += r.value("feasible", false) ? 1 : 0;
      std::ostringstream usd;
      if (best != nullptr)
        usd << std::fixed << std::setprecision(2) << (*best)["usd_per_hour"].get<double>();
      row.push_back(best ? (*best)["instance_type"].get<std::string>() : "none feasible");
      row.push_back(best ? std::to_string((*best)["num_instances"].get<int64_t>()) : "-");
      row.push_back(best ? usd.str() : "-");
      row.push_back(std::to_string(num_feasible) + "/" + std::to_string(doc["results"].size()));
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string cell = row[c];
      if (c + 1 < row.size()) cell.resize(widths[c], ' ');
      line += (c == 0 ? "" : "  ") + cell;
    }
    out << line << "\n";
  }
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& app, SweepArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Plan every point of a grid of scenario overrides, each stored in the results database; "
      "resumes an interrupted sweep; parallel with --jobs or mpirun (docs/sweep.md)");
  cmd->footer(
      "Across machines: mpirun -n N llmcap sweep SWEEP.json [--db FILE] [--threads-per-point T]\n"
      "  rank 0 reads the stored points, hands out the others and writes every result to its\n"
      "  database; every rank must see the sweep, scenario and data files at the same paths.\n"
      "  (This llmcap was built " +
      std::string(kBuiltWithMpi ? "with" : "WITHOUT") + " MPI.)");
  cmd->add_option("sweep", args.sweep_file, "Sweep file (docs/sweep.md)")
      ->required()
      ->option_text("SWEEP.json");
  cmd->add_option("--db", args.db,
                  "Results database (default: $LLMCAP_DB, else $XDG_DATA_HOME/llmcap/runs.sqlite)")
      ->option_text("FILE");
  cmd->add_option("--jobs", args.jobs,
                  "Points planned at once on this machine (0: CPUs / --threads-per-point). Under "
                  "mpirun each rank plans one point at a time: set the ranks with -n")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--threads-per-point", args.threads_per_point,
                  "Planner threads of each point (results do not depend on it)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-points", args.max_points,
                  "Plan at most N new points, then stop (rerun to continue; 0: all)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("N");
  cmd->add_option("--data-dir", args.data_dir, "Folder with hardware/ and instances/ catalogs")
      ->option_text("DIR");
  cmd->add_flag("--quiet", args.quiet, "No progress lines on stderr");
  return cmd;
}

int run_sweep_command(const SweepArgs& args, const std::string& data_dir, std::ostream& out,
                      std::ostream& err) {
  const int mpi_size = mpi_size_from_environment();
  const std::string command_line = "llmcap sweep " + args.sweep_file;
#ifndef LLMCAP_HAVE_MPI
  if (mpi_size > 1) {
    throw plan::InputError(
        "started by mpirun with " + std::to_string(mpi_size) +
        " ranks, but this llmcap was built without MPI (install libopenmpi-dev and rebuild); "
        "run it without mpirun and use --jobs");
  }
#else
  std::optional<MpiSession> mpi;
  if (mpi_size > 0) mpi.emplace();
  const int rank = mpi ? mpi->rank() : 0;
  const int size = mpi ? mpi->size() : 1;
#endif

  // Read everything first on every rank; under MPI all ranks then agree to go on or stop.
  std::optional<SweepSpec> spec;
  std::optional<model::Catalog> catalog;
  model::CalibrationProfile profile;
  std::optional<store::ResultsStore> db;
  std::map<std::string, int64_t> stored;  // rank 0: points of this sweep already stored
  std::exception_ptr setup_error;
  try {
    spec = load_sweep(args.sweep_file);
    catalog = model::Catalog::load(data_dir);
    if (!spec->profile_path.empty()) profile = model::read_profile_json(spec->profile_path);
#ifdef LLMCAP_HAVE_MPI
    if (rank == 0) db = store::ResultsStore::open(store::default_db_path(args.db));
#else
    db = store::ResultsStore::open(store::default_db_path(args.db));
#endif
    if (db) stored = db->sweep_points(spec->sweep_id);
  } catch (const store::StoreError& e) {
    setup_error = std::make_exception_ptr(plan::InputError(e.what()));
  } catch (...) {
    setup_error = std::current_exception();
  }
#ifdef LLMCAP_HAVE_MPI
  if (mpi) {
    int ok = setup_error ? 0 : 1;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int root_ok = ok;
    MPI_Bcast(&root_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    // The same bad input fails every rank: rank 0 alone says so.
    if (setup_error && rank != 0 && !root_ok) return kExitBadInput;
    if (!setup_error && !all_ok) {
      throw plan::InputError(
          "sweep stopped: another MPI rank could not read its input (see "
          "its message)");
    }
  }
#endif
  if (setup_error) std::rethrow_exception(setup_error);

  const PointRunner runner{*spec, *catalog, spec->profile_path.empty() ? nullptr : &profile,
                           args.threads_per_point};
#ifdef LLMCAP_HAVE_MPI
  if (mpi && rank != 0) {
    run_mpi_worker(runner, rank);
    return kExitOk;
  }
#endif

  // Rank 0 (or the only process): what is left.
  std::vector<size_t> pending;
  for (size_t i = 0; i < spec->points.size(); ++i) {
    if (!stored.count(spec->points[i].key)) pending.push_back(i);
  }
  const size_t num_stored = spec->points.size() - pending.size();
  if (args.max_points > 0 && static_cast<int64_t>(pending.size()) > args.max_points) {
    pending.resize(static_cast<size_t>(args.max_points));
  }
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  int jobs = args.jobs > 0 ? args.jobs : std::max(1, hardware / args.threads_per_point);
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(pending.size())));
  std::string how = std::to_string(jobs) + (jobs == 1 ? " job" : " jobs");
#ifdef LLMCAP_HAVE_MPI
  if (mpi) how = std::to_string(size) + " MPI ranks";
#endif
  err << "Sweep " << spec->sweep_id << ": " << spec->points.size() << " points, " << num_stored
      << " already stored in " << db->path().string() << ", running " << pending.size() << " on "
      << how << " x " << args.threads_per_point << " thread"
      << (args.threads_per_point == 1 ? "" : "s") << "\n";

  Coordinator coordinator(*spec, *db, pending, command_line, args.quiet, err);
#ifdef LLMCAP_HAVE_MPI
  if (mpi) {
    if (args.jobs > 1) err << "llmcap: note: --jobs is ignored under mpirun (one point per rank)\n";
    run_mpi_root(coordinator, runner, size);
  } else {
    run_local(coordinator, runner, jobs);
  }
#else
  run_local(coordinator, runner, jobs);
#endif

  if (const std::optional<Outcome>& f = coordinator.failure()) {
    err << "Stopped after " << coordinator.num_done() << " new points (all stored); rerun to "
        << "resume.\n";
    const std::string message = args.sweep_file + ": point " + spec->points[f->index].label +
                                (f->rank > 0 ? " (rank " + std::to_string(f->rank) + ")" : "") +
                                ": " + f->error;
    if (f->bad_input) throw plan::InputError(message);
    throw std::runtime_error(message);
  }
  print_points(*spec, *db, out);
  const size_t num_missing = spec->points.size() - db->sweep_points(spec->sweep_id).size();
  out << "\nSweep " << spec->sweep_id << ": " << coordinator.num_done() << " points planned now, "
      << num_stored << " stored before";
  if (num_missing > 0) out << ", " << num_missing << " still to run (rerun to continue)";
  out << "; runs in " << db->path().string() << " (llmcap runs list --kind sweep_point)\n";
  return kExitOk;
}

}  // namespace llmcap::cli
