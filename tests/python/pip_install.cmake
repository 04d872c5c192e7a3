# CTest driver of Python.pip_install (tests/CMakeLists.txt): installs the package as a user would,
# `pip install --no-build-isolation .`, into a fresh venv (Debian 12's pip refuses the system
# interpreter, PEP 668; --system-site-packages gives it Debian's setuptools), with no index (no
# download), then solves instances/examples/ex5.json from Python outside the tree.
# Inputs: PYTHON, WORK, SOURCE.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out WORKING_DIRECTORY "${WORK}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  message(STATUS "${out}")
endfunction()
file(REMOVE_RECURSE "${WORK}/venv")
file(MAKE_DIRECTORY "${WORK}")
step("${PYTHON}" -m venv --system-site-packages "${WORK}/venv")
set(ENV{MLSYS_PIP_BUILD_DIR} "${WORK}/build")
step("${WORK}/venv/bin/python" -m pip install --no-build-isolation --no-index --quiet "${SOURCE}")
# A script file: a -c argument would be split at its semicolons (a CMake list).
file(WRITE "${WORK}/solve_ex5.py" [=[
import sys
import mlsys
assert mlsys.__file__.startswith(sys.argv[2]), f"imported {mlsys.__file__}, not the venv's"
r = mlsys.solve(sys.argv[1], seconds=1, threads=1)
print(r)
assert abs(r.latency - 6734.4) < 1e-6, r.latency
assert mlsys.evaluate(sys.argv[1], r.schedule).valid
print("pip-installed mlsys solved ex5 to", r.latency)
]=])
step("${WORK}/venv/bin/python" "${WORK}/solve_ex5.py" "${SOURCE}/instances/examples/ex5.json" "${WORK}/venv")
