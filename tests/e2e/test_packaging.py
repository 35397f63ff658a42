"""The package as users get it: ``python -m build`` makes a wheel and an sdist, and each
installs into a fresh venv where the ``workbench`` command runs.

Offline by construction: the build uses this environment's setuptools (``--no-isolation``),
and the fresh venv reaches pip, setuptools and the runtime dependencies through a ``.pth``
file naming this environment's site-packages, so nothing is downloaded. A path in a
``.pth`` file is only appended to ``sys.path``; the ``.pth`` files inside that folder (the
editable install of this checkout among them) are not run. So ``workbench`` can come only
from what was built, and the test checks that it did.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from workbench.core import DISTRIBUTION, __version__

#: Files a user's install cannot do without: the deepest module, the TUI's stylesheet.
MUST_SHIP = ("workbench/core/train/run_training.py", "workbench/tui/app.tcss")
#: What a checkout holds that is not source (.git, .venv, caches): the build must not see it.
NOT_SOURCE = shutil.ignore_patterns(
    ".*", "build", "dist", "*.egg-info", "__pycache__", "translation_output"
)
#: Only the file given: no index, no dependencies, and the build backend of this environment.
#: --ignore-installed: this environment's own (editable) install must not count as one.
PIP_INSTALL = "-m pip install -q --no-deps --no-index --no-build-isolation --ignore-installed"
#: Run by the fresh venv's python: where workbench, its stylesheet and its metadata come from.
WHERE_FROM = """\
import importlib.metadata, importlib.resources, workbench
print(workbench.__file__)
print(importlib.resources.files("workbench.tui").joinpath("app.tcss").is_file())
print(importlib.metadata.version("{distribution}"))
"""


@dataclass(frozen=True)
class Built:
    """The two files ``python -m build`` wrote."""

    wheel: Path
    sdist: Path


def clean_env() -> dict[str, str]:
    """This process's environment without the path that points at the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def run(args: list[str | Path], cwd: Path) -> str:
    """Run a command outside the checkout; its output, or a failure that shows it."""
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=clean_env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=300,
    )
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}"
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """A wheel and an sdist of a copy of the checkout (a build in place would leave an
    ``.egg-info`` folder in it). Without arguments ``build`` makes the sdist first and the
    wheel from the unpacked sdist, so the wheel also proves the sdist is complete."""
    pytest.importorskip("build")
    root = tmp_path_factory.mktemp("build")
    source, dist = root / "source", root / "dist"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, source], cwd=root)
    (wheel,), (sdist,) = dist.glob("*.whl"), dist.glob("*.tar.gz")
    return Built(wheel=wheel, sdist=sdist)


def test_the_wheel_holds_every_module_the_stylesheet_and_the_license(built: Built):
    wheel = zipfile.ZipFile(built.wheel)
    names = set(wheel.namelist())
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "workbench").rglob("*.py")}
    assert modules - names == set()
    assert set(MUST_SHIP) <= names
    info = f"nmt_workbench-{__version__}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    # the name the install hints give (core.DISTRIBUTION) is the one pyproject builds
    metadata = wheel.read(f"{info}/METADATA").decode()
    assert f"Name: {DISTRIBUTION}\n" in metadata
    assert "License-Expression: MIT\n" in metadata
    scripts = wheel.read(f"{info}/entry_points.txt").decode()
    assert "[console_scripts]\nworkbench = workbench.cli:main\n" in scripts


def test_the_sdist_holds_the_sources_and_the_license(built: Built):
    top = f"nmt_workbench-{__version__}"
    with tarfile.open(built.sdist) as sdist:
        names = set(sdist.getnames())
    assert {f"{top}/{name}" for name in (*MUST_SHIP, "LICENSE", "pyproject.toml")} <= names


def fresh_venv(folder: Path) -> Path:
    """A venv without pip that sees this environment's packages after its own; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder], check=True)
    python = folder / "bin" / "python"
    own = run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=folder
    ).strip()
    shared = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    (Path(own) / "shared-dependencies.pth").write_text("\n".join(shared) + "\n")
    return python


def test_the_fresh_venv_alone_cannot_import_workbench(tmp_path: Path):
    """The control: the shared site-packages do not bring this checkout along."""
    python = fresh_venv(tmp_path / "venv")
    missing = subprocess.run(
        [python, "-c", "import textual, workbench"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
    )
    assert "No module named 'workbench'" in missing.stderr


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_the_built_package_installs_and_runs_in_a_fresh_venv(
    built: Built, kind: str, tmp_path: Path
):
    venv = tmp_path / "venv"
    python = fresh_venv(venv)
    run([python, *PIP_INSTALL.split(), getattr(built, kind)], cwd=tmp_path)

    usage = run([venv / "bin" / "workbench", "--help"], cwd=tmp_path)
    assert usage.startswith("usage: workbench")
    assert "train" in usage
    version_line = run([venv / "bin" / "workbench", "--version"], cwd=tmp_path)
    assert version_line == f"workbench {__version__}\n"
    where = run([python, "-c", WHERE_FROM.format(distribution=DISTRIBUTION)], cwd=tmp_path)
    module, stylesheet, version = where.splitlines()
    assert Path(module).resolve().is_relative_to(venv.resolve()), module  # not the checkout
    assert stylesheet == "True"
    assert version == __version__
