# cmake -DPROGRAM=bench_special -DFIRST=a -DSECOND=b -P same_checksum.cmake:
# both contenders run the same sequence to completion with the same checksum.
foreach(contender FIRST SECOND)
  execute_process(COMMAND ${PROGRAM} ${${contender}} 200000 OUTPUT_VARIABLE out RESULT_VARIABLE status)
  if(NOT status EQUAL 0 OR NOT out MATCHES "contender=${${contender}} operations=200000 .*checksum=([0-9]+)")
    message(FATAL_ERROR "${${contender}} failed (${status}): ${out}")
  endif()
  set(sum_${contender} ${CMAKE_MATCH_1})
endforeach()
if(NOT sum_FIRST STREQUAL sum_SECOND OR sum_FIRST STREQUAL "0")
  message(FATAL_ERROR "checksums differ or are zero: ${FIRST} ${sum_FIRST}, ${SECOND} ${sum_SECOND}")
endif()
message(STATUS "${FIRST} and ${SECOND}: checksum ${sum_FIRST}")
