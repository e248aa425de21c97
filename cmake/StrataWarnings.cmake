# strata_warnings(target): the project's warning set, errors in CI.
add_library(strata_warnings INTERFACE)
target_compile_options(strata_warnings INTERFACE -Wall -Wextra)
if(STRATA_WERROR)
  target_compile_options(strata_warnings INTERFACE -Werror)
endif()
function(strata_warnings target)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:strata_warnings>)
endfunction()
