#include "app/sweep.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "app/plan_run.h"
#include "app/run_store.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "model/calibration.h"
#include "model/hardware.h"
#include "model/input_error.h"
#include "plan/scenario.h"
#include "sim/input_error.h"

#ifdef LLMCAP_HAVE_MPI
#include <mpi.h>
#endif

namespace llmcap::app {
namespace {

using nlohmann::json;

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
  int64_t max_requests;

  Outcome run(size_t index) const {
    Outcome o;
    o.index = index;
    try {
      plan::Scenario scenario = plan::load_scenario_text(spec.points[index].scenario_json,
                                                         spec.scenario_path, spec.data_dir);
      scenario.max_requests = max_requests;
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
        record.summary =
            point.label + ": " + summarize_plan_document(base::parse_json_or_null(o.document));
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
  // Each other rank gets its first point before the local worker starts: a rank that starts
  // late would otherwise find short sweeps done without it.
  int remote_active = size - 1;
  for (int i = 1; i < size; ++i) {
    MPI_Status status;
    MPI_Recv(nullptr, 0, MPI_CHAR, MPI_ANY_SOURCE, kTagReady, MPI_COMM_WORLD, &status);
    const std::optional<size_t> next = coordinator.take_next();
    const int64_t reply = next ? static_cast<int64_t>(*next) : -1;
    MPI_Send(&reply, 1, MPI_INT64_T, status.MPI_SOURCE, kTagWork, MPI_COMM_WORLD);
    if (reply < 0) --remote_active;
  }
  OutcomeQueue queue;
  std::vector<std::thread> workers = start_workers(1, coordinator, runner, queue);
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

}  // namespace

bool built_with_mpi() {
#ifdef LLMCAP_HAVE_MPI
  return true;
#else
  return false;
#endif
}

SweepRun run_sweep(const SweepOptions& args, std::ostream& err) {
  const int mpi_size = mpi_size_from_environment();
  const std::string& command_line = args.command_line;
  const std::string& data_dir = args.data_dir;
  SweepRun result;
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
    spec = load_sweep(args.sweep_file, data_dir);
    std::vector<NamedPath> inputs = spec->input_files;
    const std::vector<NamedPath> catalog_files = data_dir_inputs(data_dir);
    inputs.insert(inputs.end(), catalog_files.begin(), catalog_files.end());
    check_output_paths({{"--db", store::default_db_path(args.db).string()}}, inputs);
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
    if (setup_error && rank != 0 && !root_ok) {
      result.role = SweepRun::Role::kWorkerStopped;
      return result;
    }
    if (!setup_error && !all_ok) {
      throw plan::InputError(
          "sweep stopped: another MPI rank could not read its input (see "
          "its message)");
    }
  }
#endif
  if (setup_error) std::rethrow_exception(setup_error);

  const PointRunner runner{*spec, *catalog, spec->profile_path.empty() ? nullptr : &profile,
                           args.threads_per_point, args.max_requests};
#ifdef LLMCAP_HAVE_MPI
  if (mpi && rank != 0) {
    run_mpi_worker(runner, rank);
    result.role = SweepRun::Role::kWorker;
    return result;
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
  result.num_stored_before = num_stored;
  result.num_done = coordinator.num_done();
  result.spec = std::move(spec);
  result.db = std::move(db);
  return result;
}

}  // namespace llmcap::app
