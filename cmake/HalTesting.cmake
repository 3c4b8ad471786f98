# hal_label_discovered_tests(<list_var> <label>...)
#
# Gives every test that gtest_discover_tests(... TEST_LIST <list_var>) found
# all of the labels. gtest_discover_tests cannot do it itself in CMake 3.25:
# its PROPERTIES pass through two unquoted list expansions, so
# `LABELS "unit;cpu"` reaches set_tests_properties as `LABELS unit cpu` and
# the test gets the first label only. The labels are set from a ctest include
# file that runs after the discovery's own (include files run in the order
# they are added), when the test list exists (the binary was built).
function(hal_label_discovered_tests list_var)
  set(file "${CMAKE_CURRENT_BINARY_DIR}/${list_var}_labels.cmake")
  file(WRITE "${file}"
       "if(${list_var})\n  set_tests_properties(\${${list_var}} PROPERTIES LABELS \"${ARGN}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${file}")
endfunction()
