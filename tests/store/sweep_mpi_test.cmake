# `mpirun -n 2 llmcap sweep`: both ranks plan points, rank 0 writes them all into one database;
# a second run finds every point stored and plans none. Run by ctest (tests/store/CMakeLists.txt)
# with -DLLMCAP=... -DMPIEXEC=... -DSWEEP=... -DWORK_DIR=...
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(db "${WORK_DIR}/runs.sqlite")

function(run_sweep out_var err_var)
  execute_process(
    COMMAND "${MPIEXEC}" -n 2 --oversubscribe "${LLMCAP}" sweep "${SWEEP}" --db "${db}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mpirun llmcap sweep failed (${rc}):\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()

run_sweep(out err)
message(STATUS "first run:\n${out}\n${err}")
if(NOT err MATCHES "6 points, 0 already stored .* running 6 on 2 MPI ranks")
  message(FATAL_ERROR "expected 6 points run on 2 MPI ranks, got:\n${err}")
endif()
# Rank 1 planned at least one point (its progress lines name it), rank 0 stored it.
if(NOT err MATCHES "rank 1\\)")
  message(FATAL_ERROR "rank 1 planned no point:\n${err}")
endif()
if(NOT out MATCHES "6 points planned now, 0 stored before")
  message(FATAL_ERROR "expected 6 points planned:\n${out}")
endif()

# One database holds all six points.
execute_process(COMMAND "${LLMCAP}" runs list --kind sweep_point --limit 0 --db "${db}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE listing ERROR_VARIABLE list_err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "llmcap runs list failed (${rc}): ${list_err}")
endif()
string(REGEX MATCHALL "\n *[0-9]+  sweep_point  " rows "${listing}")
list(LENGTH rows num_rows)
if(NOT num_rows EQUAL 6)
  message(FATAL_ERROR "expected 6 sweep_point runs in ${db}, found ${num_rows}:\n${listing}")
endif()

# Resume: everything is stored, nothing runs again.
run_sweep(out err)
if(NOT err MATCHES "6 points, 6 already stored .* running 0")
  message(FATAL_ERROR "expected all 6 points already stored, got:\n${err}")
endif()
execute_process(COMMAND "${LLMCAP}" runs list --kind sweep_point --limit 0 --db "${db}"
                OUTPUT_VARIABLE listing)
string(REGEX MATCHALL "\n *[0-9]+  sweep_point  " rows "${listing}")
list(LENGTH rows num_rows)
if(NOT num_rows EQUAL 6)
  message(FATAL_ERROR "the second run added points: ${num_rows} sweep_point runs")
endif()
