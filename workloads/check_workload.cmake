# One workload test: run BIN --mode MODE --scale SCALE --seed SEED (under
# LD_PRELOAD=PRELOAD if given); it must exit 0 and its last line must be
# "checksum EXPECTED".
set(command ${BIN} --mode ${MODE} --scale ${SCALE} --seed ${SEED})
if(PRELOAD)
  set(command ${CMAKE_COMMAND} -E env LD_PRELOAD=${PRELOAD} ${command})
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${BIN} --mode ${MODE}: ${status}\nstdout:\n${out}\nstderr:\n${err}")
endif()
string(STRIP "${out}" out)
string(REGEX REPLACE ".*\n" "" last_line "${out}")
if(NOT last_line STREQUAL "checksum ${EXPECTED}")
  message(FATAL_ERROR "${BIN} --mode ${MODE} --scale ${SCALE} --seed ${SEED}: last line '${last_line}', "
                      "expected 'checksum ${EXPECTED}'")
endif()
message(STATUS "${MODE}: checksum ${EXPECTED}")
