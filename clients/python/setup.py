"""Bundles the one copy of the Lua scripts (``clients/scripts``, beside
this package in the repository) into the wheel and the sdist as
``redis_guard/lua``: the scripts backend reads them from there once
installed. Everything else is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent / "scripts"
BUNDLED = HERE / "redis_guard" / "lua"


def bundle() -> None:
    # From a checkout; an sdist being built again has its bundle already.
    if SHARED.is_dir():
        BUNDLED.mkdir(exist_ok=True)
        for script in SHARED.glob("*.lua"):
            shutil.copy2(script, BUNDLED / script.name)


class BuildPy(build_py):
    def run(self) -> None:
        bundle()
        super().run()


class Sdist(sdist):
    def run(self) -> None:
        bundle()
        super().run()


setup(cmdclass={"build_py": BuildPy, "sdist": Sdist})
