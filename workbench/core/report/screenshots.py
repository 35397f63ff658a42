"""The TUI's screenshots of a run (F6), named so that the report can caption them.

The assignment asks for screenshots of the training log and the translations. F6 saves
the screen as ``screenshot-<pane>-<YYYYmmdd-HHMMSS>.svg`` into the newest run folder, and
a PNG beside it when a converter is installed (``pip install 'nmt-workbench[png]'``,
cairosvg and the system's cairo library), for pasting where SVG is not taken. The report
reads them back from the names alone: which pane, and when.

An SVG the terminal exported asks for its font from a CDN (``@font-face`` URLs) and says
where it was made in a comment; :func:`offline_svg` drops both, so ``report.html`` still
loads nothing from anywhere. The font falls back to the reader's monospace.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

PREFIX = "screenshot-"
STAMP = "%Y%m%d-%H%M%S"
#: ``screenshot-training-20261201-173400.svg`` (the pane, the local time it was taken).
NAME = re.compile(rf"^{PREFIX}(?P<pane>[a-z]+)-(?P<stamp>\d{{8}}-\d{{6}})\.svg$")
_FONT_FACE = re.compile(r"@font-face\s*\{[^}]*\}")
_COMMENT = re.compile(r"<!--.*?-->", re.S)


def screenshot_name(pane: str, when: float | None = None) -> str:
    """The file name F6 gives a screenshot of ``pane`` taken at ``when`` (default: now)."""
    return f"{PREFIX}{pane}-{time.strftime(STAMP, time.localtime(when))}.svg"


@dataclass(frozen=True)
class Screenshot:
    """One saved screenshot: its file in the run folder, the pane, when, and its SVG."""

    file: str
    pane: str
    taken: str  # "2026-12-01 17:34:00"
    svg: str
    png: str | None = None  # the PNG written beside it, if any

    @property
    def caption(self) -> str:
        """``Training pane, 2026-12-01 17:34:00``."""
        return f"{self.pane.title()} pane, {self.taken}"


def read_screenshots(run_dir: Path) -> list[Screenshot]:
    """The run folder's screenshots, oldest first; files that do not read are left out."""
    shots = []
    for path in run_dir.glob(f"{PREFIX}*.svg"):
        found = NAME.match(path.name)
        if found is None:
            continue
        try:
            svg = path.read_text(encoding="utf-8")
            taken = time.strftime("%Y-%m-%d %H:%M:%S", time.strptime(found["stamp"], STAMP))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        png = path.with_suffix(".png")
        shots.append(
            Screenshot(path.name, found["pane"], taken, svg, png.name if png.is_file() else None)
        )
    return sorted(shots, key=lambda shot: (shot.taken, shot.file))


def offline_svg(svg: str) -> str:
    """The screenshot without its web-font URLs and comments, to inline in a page."""
    return _COMMENT.sub("", _FONT_FACE.sub("", svg))


def write_png(svg_file: Path) -> Path | None:
    """A PNG beside ``svg_file`` when cairosvg (and its cairo library) is installed, else
    None: the PNG is a convenience, never a reason for F6 to fail."""
    try:
        import cairosvg
    except (ImportError, OSError):  # OSError: the package without libcairo
        return None
    png = svg_file.with_suffix(".png")
    try:
        cairosvg.svg2png(url=str(svg_file), write_to=str(png))
    except Exception:  # a converter's own failure (a font, a parse): no PNG, the SVG stands
        png.unlink(missing_ok=True)
        return None
    return png
