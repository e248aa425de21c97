# Runs PROBE MODE under memcheck. use-after-*: the invalid read must be
# reported (exit 99, "Invalid read" in the log). clean: no error at all.
# opt-out: STRATA_REAP_CHECK=0 turns the announcements off, so the same
# use-after-free goes unseen (the plain reap, as callgrind counts it).
set(probe_mode ${MODE})
set(env)
if(MODE STREQUAL "opt-out")
  set(probe_mode use-after-free)
  set(env ${CMAKE_COMMAND} -E env STRATA_REAP_CHECK=0)
endif()
execute_process(
  COMMAND ${env} ${VALGRIND} --tool=memcheck --error-exitcode=99 --leak-check=no ${PROBE} ${probe_mode}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${err}")
if(MODE STREQUAL "clean" OR MODE STREQUAL "opt-out")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "memcheck reported errors in the ${MODE} run (exit ${rc})")
  endif()
else()
  if(NOT rc EQUAL 99)
    message(FATAL_ERROR "memcheck did not fail the ${MODE} run (exit ${rc})")
  endif()
  if(NOT err MATCHES "Invalid read of size")
    message(FATAL_ERROR "memcheck did not report the invalid read in the ${MODE} run")
  endif()
endif()
if(NOT out MATCHES "probe reached the end")
  message(FATAL_ERROR "the ${MODE} probe did not run to the end")
endif()
