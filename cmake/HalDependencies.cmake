# Every dependency comes from a Debian package; nothing is downloaded.
macro(hal_require_package name debian_package)
  find_package(${name} ${ARGN} QUIET)
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR "hal needs ${name}: install it with `apt-get install ${debian_package}`")
  endif()
endmacro()

hal_require_package(TBB libtbb-dev)
hal_require_package(fmt libfmt-dev)
if(HAL_BUILD_TESTS)
  hal_require_package(GTest libgtest-dev)
endif()
find_package(Threads REQUIRED)
