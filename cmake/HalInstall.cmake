# Installs the library, its headers and an exported package: find_package(hal) -> hal::hal.
include(CMakePackageConfigHelpers)

install(TARGETS hal EXPORT halTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY hal ops DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(EXPORT halTargets NAMESPACE hal:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hal)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/halConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/halConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hal)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/halConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/halConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/halConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hal)
if(HAL_BUILD_TOOLS)
  install(TARGETS hal_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
