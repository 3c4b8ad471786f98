# Every dependency comes from a Debian package; nothing is downloaded.
macro(hal_require_package name debian_package)
  find_package(${name} ${ARGN} QUIET)
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR "hal needs ${name}: install it with `apt-get install ${debian_package}`")
  endif()
endmacro()

if(HAL_TSAN)
  # ThreadSanitizer sees only instrumented code, and Debian's oneTBB is not:
  # its hand-offs between threads would be reported as races. The TSan build
  # compiles hal against a header-only std::thread implementation of the few
  # TBB calls hal makes (tests/tsan/tbb_std_thread), so every thread and every
  # synchronisation the tests exercise is visible to the sanitizer.
  find_package(Threads REQUIRED)
  add_library(TBB::tbb INTERFACE IMPORTED)
  set_target_properties(TBB::tbb PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES ${PROJECT_SOURCE_DIR}/tests/tsan/tbb_std_thread
    INTERFACE_LINK_LIBRARIES Threads::Threads)
else()
  hal_require_package(TBB libtbb-dev)
endif()
hal_require_package(fmt libfmt-dev)
if(HAL_BUILD_TESTS)
  hal_require_package(GTest libgtest-dev)
endif()
find_package(Threads REQUIRED)
