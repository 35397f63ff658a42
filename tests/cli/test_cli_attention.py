"""``workbench attention``: the heatmap printed, saved as SVG and PNG, and its mistakes."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.cells import cell_len

SENTENCE = "The cat sat on the mat."


def test_cli_prints_heatmap_and_writes_svg(cli, tiny_model_dir: Path, tmp_path: Path):
    svg = tmp_path / "map.svg"
    done = cli("attention", SENTENCE, "--model", str(tiny_model_dir), "--words", "--svg", str(svg))
    out = done.stdout
    assert done.returncode == 0
    assert "source:      The cat sat on the mat." in out
    assert "mean of 1 layer," in out
    assert re.search(r"\[[░▒▓█·\s]+\]", out), out  # strongest token marked, characters only
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert "cat" in svg.read_text(encoding="utf-8")


@pytest.mark.parametrize("no_color", [True, False])
def test_cli_no_color_on_a_terminal_is_characters_only(
    cli, tiny_model_dir: Path, monkeypatch, no_color: bool
):
    monkeypatch.setenv("FORCE_COLOR", "1")  # Rich treats the captured stdout as a terminal
    monkeypatch.setenv("COLUMNS", "80")
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    done = cli("attention", "I like to drink tea.", "--model", str(tiny_model_dir))
    assert done.returncode == 0
    out = done.stdout
    has_colour = re.search(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;[0-9;]+)m", out)
    assert (has_colour is None) is no_color
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert re.search(r"\[[░▒▓█]+\]", plain), plain  # shades carry the levels either way
    assert all(cell_len(line) <= 80 for line in plain.splitlines()[3:])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["attention", "   "], "empty sentence"),
        (["attention", "hi", "--layer", "5"], "does not exist: the model has 1 decoder layer "),
        (["attention", " ".join(["word"] * 2000)], "the attention view takes at most"),
    ],
)
def test_cli_bad_input_is_one_clear_line(cli, tiny_model_dir: Path, argv, message):
    done = cli(*argv, "--model", str(tiny_model_dir))
    assert done.returncode == 2
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert message in err, err


def test_cli_without_a_model_says_how_to_get_one(cli, tmp_path: Path):
    done = cli("attention", "I like tea.", cwd=tmp_path)
    assert done.returncode == 2
    assert "train one first (workbench train --headless --preset demo) or pass --model" in (
        done.stderr
    )


def test_png_without_matplotlib_says_so(cli, tiny_model_dir: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import now raises ImportError
    png = str(tmp_path / "map.png")
    done = cli("attention", SENTENCE, "--model", str(tiny_model_dir), "--png", png)
    assert done.returncode == 2
    assert "--png needs matplotlib" in done.stderr


def test_attention_cli_module_is_light():
    """A new interpreter: what the module imports is the point."""
    code = "import sys, workbench.cli.attention; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
