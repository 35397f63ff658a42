"""Every user mistake the issue lists, made for real through the CLI in a fresh folder.

Each one must end with one line on stderr naming the value and the fix, a non-zero exit
code, no traceback, and nothing written (the folder holds exactly what the test put there).
How fast each fails is measured in docs/reliability.md, not asserted here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli

TRAIN = ("train", "--headless", "--preset", "demo", "--no-interact")


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


# name -> (files to create, argv, env, words the one line must contain)
MISTAKES = {
    "hub unreachable": (
        {},
        ("train", "--headless", "--preset", "opus-en-zh"),
        {"HF_HUB_OFFLINE": "1"},
        ["Helsinki-NLP/opus-mt-en-zh", "HF_ENDPOINT", "HF_HUB_OFFLINE", "--preset demo"],
    ),
    "hub unreachable, no offline flag": (
        {},
        ("train", "--headless", "--preset", "opus-en-zh"),
        {"HF_HUB_OFFLINE": "", "HF_ENDPOINT": "http://127.0.0.1:9"},
        ["127.0.0.1:9", "HF_ENDPOINT", "--preset demo"],
    ),
    "model path missing": (
        {},
        (*TRAIN, "--model", "./no_such_model"),
        {},
        ["no_such_model", "does not exist"],
    ),
    "dataset file missing": ({}, (*TRAIN, "--data", "pairs.tsv"), {}, ["pairs.tsv", "not found"]),
    "test data file missing": (
        {},
        (*TRAIN, "--test-data", "held-out.tsv"),
        {},
        ["held-out.tsv", "--test-data"],
    ),
    "fp16 without a GPU": ({}, (*TRAIN, "--fp16"), {}, ["--fp16", "CUDA", "--bf16"]),
    "dataset file empty": (
        {"pairs.tsv": b""},
        (*TRAIN, "--data", "pairs.tsv"),
        {},
        ["pairs.tsv", "empty"],
    ),
    "dataset not UTF-8": (
        {"pairs.tsv": b"en\tzh\n\xff\xfe bad\tbytes\n"},
        (*TRAIN, "--data", "pairs.tsv"),
        {},
        ["pairs.tsv", "not UTF-8"],
    ),
    "dataset lacks columns": (
        {"pairs.tsv": b"english\tchinese\nhi\tni hao\n"},
        (*TRAIN, "--data", "pairs.tsv"),
        {},
        ["pairs.tsv", "'en'", "--source-lang"],
    ),
    "output folder not writable": (
        {"blocker": b"a file, not a folder"},
        (*TRAIN, "--output-dir", "blocker/out"),
        {},
        ["blocker/out", "--output-dir"],
    ),
    "learning rate out of range": ({}, (*TRAIN, "--lr", "-5"), {}, ["-5", "learning rate"]),
    "epochs out of range": ({}, (*TRAIN, "--epochs", "0"), {}, ["epochs", "0"]),
    "batch size not a number": ({}, (*TRAIN, "--batch-size", "lots"), {}, ["lots", "batch"]),
    "resume with nothing to resume": (
        {},
        (*TRAIN, "--resume"),
        {},
        ["nothing to resume", "without --resume"],
    ),
    "interact with no saved model yet": (
        {},
        ("interact",),
        {},
        ["no saved model", "workbench train"],
    ),
}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_mistake_is_one_clear_line_and_writes_nothing(name: str, tmp_path: Path):
    files, argv, env, needles = MISTAKES[name]
    for rel, content in files.items():
        (tmp_path / rel).write_bytes(content)
    before = files_under(tmp_path)
    result = run_cli(*argv, cwd=tmp_path, env=env, input="hello\n", timeout=120)
    assert result.returncode not in (0, None), result.stdout[-500:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("workbench: error: ")
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert files_under(tmp_path) == before
