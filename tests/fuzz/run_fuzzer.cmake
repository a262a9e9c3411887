# SPDX-License-Identifier: Apache-2.0
# Runs one fuzz target briefly, as a CTest test (see CMakeLists.txt for the variables).
# libFuzzer writes every new interesting input into its first corpus directory, so it gets a
# fresh copy of the seeds in the build tree: the checked-in corpus is never written to.
#   FUZZER   the fuzz target's executable
#   SEEDS    tests/fuzz/corpus/<name>
#   WORK     a build-tree directory for the corpus copy and crash artifacts
#   SECONDS  how long to fuzz
#   DICT     a libFuzzer dictionary, or empty

file(REMOVE_RECURSE ${WORK}/corpus)
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)  # artifacts survive the next run
file(COPY ${SEEDS}/ DESTINATION ${WORK}/corpus)

set(options -max_total_time=${SECONDS} -timeout=5 -rss_limit_mb=2048 -artifact_prefix=${WORK}/artifacts/)
if(DICT)
  list(APPEND options -dict=${DICT})
endif()

execute_process(COMMAND ${FUZZER} ${options} ${WORK}/corpus RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR
    "${FUZZER} failed (${status}). The input that did it is in ${WORK}/artifacts/ "
    "(crash-*, leak-*, timeout-*, oom-*); reproduce with: ${FUZZER} <that file>")
endif()
