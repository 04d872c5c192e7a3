"""The Python package's build (pyproject.toml): the package is engine/python/mlsys; its compiled
module, mlsys/_mlsys.<abi>.so, is the CMake target mlsys_python, built here in build/python-pip
(tests and benchmarks off; kept between installs, so a second install only relinks) with the
interpreter that runs pip, then copied into the build. Needs cmake, a C++20 compiler and the
Debian packages of .ci/install-deps --minimal plus pybind11-dev and python3-dev; no download."""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))

# Setuptools before 70 builds wheels through the separate `wheel` package; an interpreter that
# cannot import it (pyenv's or a bare venv's, without --system-site-packages) fails later with
# pip's cryptic "invalid command 'bdist_wheel'". Say so here, with the fix.
try:
    import wheel  # noqa: F401
except ImportError:
    sys.exit(f"mlsys: {sys.executable} cannot import the 'wheel' package, which this build needs. Use "
             "Debian's interpreter: /usr/bin/python3 -m venv --system-site-packages VENV (with apt-get "
             "install python3-wheel python3-setuptools), or install wheel into this interpreter.")


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.environ.get("MLSYS_PIP_BUILD_DIR", os.path.join(ROOT, "build", "python-pip"))
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        # The module only: the executable's allocator (MLSYS_JEMALLOC) is not needed here.
        defs = ["-DCMAKE_BUILD_TYPE=Release", "-DMLSYS_BUILD_TESTS=OFF", "-DMLSYS_BUILD_BENCH=OFF",
                "-DMLSYS_BUILD_PYTHON=ON", "-DMLSYS_JEMALLOC=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
        # The generator is chosen once, when the build directory is new.
        fresh = not os.path.exists(os.path.join(build, "CMakeCache.txt"))
        generator = ["-G", "Ninja"] if fresh and shutil.which("ninja") else []
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build] + generator + defs)
        subprocess.check_call(["cmake", "--build", build, "--target", "mlsys_python", "-j", jobs])
        built = os.path.join(build, "python", "mlsys")
        module = [f for f in os.listdir(built) if f.startswith("_mlsys") and f.endswith(".so")]
        if not module:
            raise RuntimeError(f"the CMake build left no _mlsys module in {built}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(built, module[0]), target)
        # The shipped configs, for mlsys.solve(config="contest").
        shutil.copytree(os.path.join(built, "configs"), os.path.join(os.path.dirname(target), "configs"),
                        dirs_exist_ok=True)


setup(
    # mlsys_onnx: the ONNX importer (pure Python; mlsys.Problem.from_onnx, `mlsys import`).
    packages=["mlsys", "mlsys_onnx"],
    package_dir={"mlsys": "engine/python/mlsys", "mlsys_onnx": "engine/onnx/mlsys_onnx"},
    ext_modules=[CMakeExtension("mlsys._mlsys")],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
