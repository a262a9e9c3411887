# SPDX-License-Identifier: Apache-2.0
# ctest's bench-smoke: both benchmarks run briefly and print their figures. Performance
# targets are not checked here; they are read from real runs (see docs/performance.md).
function(run_and_expect name)
  cmake_parse_arguments(ARG "" "" "COMMAND;EXPECT" ${ARGN})
  execute_process(COMMAND ${ARG_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} exited with ${rc}:\n${err}")
  endif()
  foreach(pattern IN LISTS ARG_EXPECT)
    if(NOT out MATCHES "${pattern}")
      message(FATAL_ERROR "${name}: output lacks '${pattern}'\n${err}")
    endif()
  endforeach()
endfunction()

run_and_expect(memdiag-sample-bench
  COMMAND ${SAMPLE_BENCH} --benchmark_min_time=0.01
  EXPECT "FullSample" "Source/vmstat" "Floor/" "Render" "full sample of all node sources +[0-9.]+ us")
run_and_expect(scrape_vs_node_exporter.py
  COMMAND ${PYTHON} ${SCRAPE_SCRIPT} --memdiagd ${MEMDIAGD} --scrapes 50 --rounds 1 --warmup 5
  EXPECT "CPU per scrape, us" "RSS after scrapes, MiB" "CPU per scrape ratio memdiagd/node_exporter +[0-9.]+")
