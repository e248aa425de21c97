# Install: headers, every target in the export set strata-targets, the CMake
# package `strata` (find_package(strata) -> strata::layers, strata::reap, strata::strata, strata::hardened)
# and the pkg-config files the parts put in ${STRATA_PKGCONFIG_DIR}.
include(CMakePackageConfigHelpers)
install(DIRECTORY include/strata DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT strata-targets NAMESPACE strata:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/strata)
configure_package_config_file(cmake/strataConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/strataConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/strata)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/strataConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/strataConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/strataConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/strata)
