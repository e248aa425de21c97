# STRATA_SANITIZE=address builds everything with ASan+UBSan, =thread with TSan.
# STRATA_SANITIZER_ACTIVE lets code and tests that cannot run under a sanitizer
# (LD_PRELOAD of another malloc, RLIMIT_AS) label themselves out.
set(STRATA_SANITIZER_ACTIVE OFF)
if(STRATA_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  set(STRATA_SANITIZER_ACTIVE ON)
elseif(STRATA_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  set(STRATA_SANITIZER_ACTIVE ON)
elseif(NOT STRATA_SANITIZE STREQUAL "")
  message(FATAL_ERROR "STRATA_SANITIZE='${STRATA_SANITIZE}': expected empty, 'address' or 'thread'")
endif()
