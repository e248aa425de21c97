# Runs PROBE MODE under memcheck. use-after-*: the invalid read must be
# reported (exit 99, "Invalid read" in the log). clean: no error at all.
execute_process(
  COMMAND ${VALGRIND} --tool=memcheck --error-exitcode=99 --leak-check=no ${PROBE} ${MODE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${err}")
if(MODE STREQUAL "clean")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "memcheck reported errors in the clean run (exit ${rc})")
  endif()
else()
  if(NOT rc EQUAL 99)
    message(FATAL_ERROR "memcheck did not fail the ${MODE} run (exit ${rc})")
  endif()
  if(NOT err MATCHES "Invalid read of size")
    message(FATAL_ERROR "memcheck did not report the invalid read in the ${MODE} run")
  endif()
  if(NOT out MATCHES "probe reached the end")
    message(FATAL_ERROR "the ${MODE} probe did not run to the end")
  endif()
endif()
