# CTest driver of the consumer projects (tests/CMakeLists.txt, Consumer.*): MODE=installed installs
# this build into WORK/prefix and builds installed/ against it with find_package; MODE=subdir builds
# subdir/, which adds the source tree with add_subdirectory. Either way the consumer solves ex5.
# Inputs: MODE, WORK, MLSYS_BINARY_DIR, MLSYS_SOURCE_DIR, GENERATOR.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  message(STATUS "${out}")
endfunction()
file(REMOVE_RECURSE "${WORK}")
set(args -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release)
if(MODE STREQUAL "installed")
  step(${CMAKE_COMMAND} --install "${MLSYS_BINARY_DIR}" --prefix "${WORK}/prefix")
  step(${CMAKE_COMMAND} -S "${CMAKE_CURRENT_LIST_DIR}/installed" -B "${WORK}/build" ${args}
       "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
else()
  step(${CMAKE_COMMAND} -S "${CMAKE_CURRENT_LIST_DIR}/subdir" -B "${WORK}/build" ${args}
       "-DMLSYS_SOURCE=${MLSYS_SOURCE_DIR}")
endif()
step(${CMAKE_COMMAND} --build "${WORK}/build" --target consumer -j 2)
step("${WORK}/build/consumer" "${MLSYS_SOURCE_DIR}/instances/examples/ex5.json" "${WORK}/out.json")
