# Installs the build into a temporary prefix and imports hal from there (not
# from the build tree): the module must be complete on its own.
set(prefix ${BUILD_DIR}/python-install-test)
file(REMOVE_RECURSE ${prefix})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${prefix}/${SITE}
          ${PYTHON} -c "import hal, numpy; assert hal.__file__.startswith('${prefix}'), hal.__file__; x = hal.asarray(numpy.arange(4.0, dtype=numpy.float32)); assert hal.ops.sum(x).numpy() == 6.0; print(hal.__file__)"
  WORKING_DIRECTORY ${prefix}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "import hal from ${prefix}/${SITE} failed: ${out}${err}")
endif()
message(STATUS "imported ${out}")
file(REMOVE_RECURSE ${prefix})
