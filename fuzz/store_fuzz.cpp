// Fuzzes store::ResultsStore on arbitrary database files (a results database someone handed
// over, truncated or edited): open, then every read the CLI makes (list, the latest run, sweep
// points, the integrity check). A refused file is store::StoreError; a crash, a sanitizer
// report or another exception is a finding. The seed is a database a real plan wrote
// (scripts/fuzz makes it).
#include "fuzz/fuzz_util.h"
#include "store/results_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = llmcap::fuzz::write_input(data, size, "runs.sqlite");
  // SQLite's side files of the previous input must not be taken for this one's.
  std::error_code ignored;
  std::filesystem::remove(path.string() + "-wal", ignored);
  std::filesystem::remove(path.string() + "-shm", ignored);
  try {
    llmcap::store::ResultsStore db = llmcap::store::ResultsStore::open(path);
    for (const llmcap::store::RunRecord& r : db.list_runs()) {
      (void)db.get_run(r.id);
      if (!r.sweep_id.empty()) (void)db.sweep_points(r.sweep_id);
    }
    (void)db.integrity_check();
    (void)db.get_run(0);
  } catch (const llmcap::store::StoreError&) {
  }
  return 0;
}
