# cmake -DNM=<nm> -DOBJECTS="<a.o>|<b.o>|..." -P check_isa_objects.cmake
#
# Fails when a weak symbol (an inline or template function, a static local's
# guard) is defined both by an object compiled for an extra ISA (*_avx2.cpp.o,
# *_avx512*.cpp.o, *_amx.cpp.o: cpu_ref/CMakeLists.txt) and by a baseline object. The
# linker keeps one copy of each weak symbol for the whole library; if it kept
# the AVX2 one, baseline code would run AVX2 instructions on a CPU without
# them. ISA files must keep such code to themselves (always_inline helpers,
# anonymous namespaces) or take it from baseline files by a real call.
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" objects "${OBJECTS}")
set(isa_weak "")
set(base_weak "")
foreach(object IN LISTS objects)
  execute_process(COMMAND "${NM}" --defined-only "${object}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${object}")
  endif()
  string(REGEX MATCHALL "[^\n]* [WVu] [^\n]*" weak_lines "${symbols}")
  set(names "")
  foreach(line IN LISTS weak_lines)
    string(REGEX REPLACE "^.* [WVu] " "" name "${line}")
    # Exception-handling data references and type information (Clang's UBSan
    # emits the RTTI of function types for -fsanitize=function): data, not code.
    if(NOT name MATCHES "^DW\\.ref\\." AND NOT name MATCHES "^_ZT[IS]")
      list(APPEND names "${name}")
    endif()
  endforeach()
  if(object MATCHES "_(avx2|avx512[a-z0-9]*|amx)\\.cpp\\.o$")
    list(APPEND isa_weak ${names})
  else()
    list(APPEND base_weak ${names})
  endif()
endforeach()
set(shared "")
foreach(name IN LISTS isa_weak)
  if(name IN_LIST base_weak)
    list(APPEND shared "${name}")
  endif()
endforeach()
list(LENGTH objects count)
if(shared)
  list(REMOVE_DUPLICATES shared)
  string(REPLACE ";" "\n  " shown "${shared}")
  message(FATAL_ERROR "weak symbols defined by both ISA-specific and baseline objects (demangle with c++filt):\n  ${shown}")
endif()
message(STATUS "${count} objects: no weak symbol shared between ISA-specific and baseline code")
