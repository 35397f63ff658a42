"""``translate --pick`` and ``interact --pick``: candidates, the pick consistent with the
scores printed, ``--json`` in the input's order, and each bad input one line."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers.cli import command_env
from tests.helpers.comet import GOOD, KIWI
from tests.helpers.paths import FIXTURES
from tests.helpers.picking import varied_copy
from workbench.core.views.wide import is_wide

pytest.importorskip("ctranslate2")

METRICX_TOKENIZER = FIXTURES / "metricx" / "tokenizer"
LINES = "I like tea.\n\nWhere is the station?\nHe reads a book every day.\n"
SHORT = ("--max-new-tokens", "8")


@pytest.fixture(scope="module")
def marian(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return varied_copy(tiny_model_dir, tmp_path_factory.mktemp("pick") / "marian")


def objects(done) -> list[dict]:
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def assert_consistent(row: dict, count: int, higher_is_better: bool = True) -> None:
    """The translation is a candidate with the best score; the counts add up."""
    scores = [c["score"] for c in row["candidates"] if c["score"] is not None]
    best = max(scores) if higher_is_better else min(scores)
    assert row["translation"] in {c["text"] for c in row["candidates"] if c["score"] == best}
    assert sum(c["count"] for c in row["candidates"]) == count


@pytest.mark.parametrize(
    ("flags", "picked_by"),
    [
        (("--pick", "mbr", "--utility", "chrf"), "mbr:chrF"),
        (("--pick", "mbr", "--utility", "bleu", "--fast-mbr"), "mbr-pruned:BLEU"),
        (("--pick", "mbr", "--utility", "comet", "--utility-model", str(GOOD)), "mbr:COMET"),
        (("--pick", "qe", "--qe", str(KIWI)), "qe:"),
    ],
)
def test_translate_json_is_one_object_a_line_in_order(cli, marian, flags, picked_by):
    done = cli(
        "translate", "--model", str(marian), "--backend", "transformers", "--json",
        "--candidates", "5", *flags, *SHORT, input=LINES,
    )  # fmt: skip
    rows = objects(done)
    assert [r["source"] for r in rows] == LINES.splitlines()
    assert rows[1] == {"source": "", "translation": "", "picked_by": None, "candidates": []}
    for row in rows[:1] + rows[2:]:
        assert row["picked_by"].startswith(picked_by)
        assert_consistent(row, 5)


@pytest.fixture(scope="module")
def metricx(metricx_models, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny MetricX-24 checkpoint with its tokenizer in its folder, as a user's is."""
    folder = tmp_path_factory.mktemp("metricx") / "metricx-24-tiny"
    shutil.copytree(metricx_models["tiny-fp32"], folder)
    for file in METRICX_TOKENIZER.iterdir():
        shutil.copy(file, folder / file.name)
    return folder


@pytest.mark.parametrize("method", ["mbr", "qe"])
def test_metricx_picks_the_candidate_with_the_lowest_score(cli, marian, metricx, method):
    """MetricX as MBR's utility and as MetricX-QE: lower is better, so the pick is the
    candidate with the lowest score, and the metric is named as the papers name it."""
    flags = (
        ("--utility", "metricx", "--utility-model", str(metricx))
        if method == "mbr"
        else ("--qe-metric", "metricx", "--qe", str(metricx))
    )
    done = cli(
        "translate", "--model", str(marian), "--backend", "transformers", "--json",
        "--pick", method, "--candidates", "5", *flags, *SHORT, input=LINES,
    )  # fmt: skip
    for row in objects(done):
        if row["source"]:
            assert row["picked_by"] == ("mbr:MetricX-24" if method == "mbr" else "qe:MetricX-24-QE")
            assert_consistent(row, 5, higher_is_better=False)
            assert all(0 <= c["score"] <= 25 for c in row["candidates"])


def test_a_metricx_picker_is_read_with_the_tokenizer_given(cli, marian, metricx_models):
    """A MetricX folder without its tokenizer picks with --metricx-tokenizer, and without
    it is refused in one line that names that flag."""
    folder = str(metricx_models["tiny-fp32"])  # no tokenizer inside
    flags = ("--pick", "qe", "--qe-metric", "metricx", "--qe", folder, "--candidates", "3")
    done = cli(
        "translate", "--model", str(marian), "--backend", "transformers", "--json", *flags,
        "--metricx-tokenizer", str(METRICX_TOKENIZER), *SHORT, input="I like tea.\n",
    )  # fmt: skip
    (row,) = objects(done)
    assert row["picked_by"] == "qe:MetricX-24-QE"
    assert_consistent(row, 3, higher_is_better=False)
    refused = cli("translate", "--model", str(marian), *flags, *SHORT, input="I like tea.\n")
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "--metricx-tokenizer" in line


def test_train_and_tui_refuse_a_missing_picker_before_anything_slow(cli, tmp_path: Path):
    missing = str(tmp_path / "no-such-metricx")
    pick = ("--pick", "qe", "--qe-metric", "metricx")
    for command in (
        ("train", "--headless", "--preset", "demo", *pick, "--qe-model", missing),
        ("tui", "--preset", "demo", *pick, "--qe", missing),
    ):
        done = cli(*command, cwd=tmp_path, input="")
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert f"MetricX model folder '{missing}' does not exist" in line
        assert not (tmp_path / "translation_output").exists()


@pytest.mark.parametrize("model", ["marian", "qwen3"])
def test_ct2_and_a_decoder_only_model_pick_too(cli, model, marian, causal_models, tmp_path):
    folder = (
        marian
        if model == "marian"
        else varied_copy(causal_models["qwen3"], tmp_path / "qwen3", causal=True)
    )
    done = cli(
        "translate", "--model", str(folder), "--backend", "ct2", "--json", "--pick", "mbr",
        "--utility", "chrf", "--top-p", "0.9", "--candidates-from", "both", *SHORT, input=LINES,
    )  # fmt: skip
    for row in objects(done):
        if row["source"]:
            assert_consistent(row, 8)


def test_without_a_pick_translate_prints_what_it_always_did(cli, marian):
    plain = cli("translate", "--model", str(marian), *SHORT, input=LINES)
    as_json = objects(cli("translate", "--model", str(marian), "--json", *SHORT, input=LINES))
    assert plain.returncode == 0
    assert [r["translation"] for r in as_json] == plain.stdout.splitlines()
    assert all(r["picked_by"] is None for r in as_json)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--pick", "mbr", "--utility", "chrf", "--candidates", "0"), "--candidates must be 2..64"),
        (("--pick", "mbr", "--utility", "chrf", "--candidates", "1"), "--candidates must be 2..64"),
        (("--pick", "mbr"), "--pick mbr needs --utility"),
        (("--candidates", "4"), "add --pick qe or --pick mbr"),
        (("--qe-metric", "metricx"), "--qe-metric chooses how a pick is made; add --pick"),
        (("--top-p", "0.9"), "--top-p chooses how a pick is made; add --pick"),
        (("--pick", "qe", "--utility", "chrf"), "--utility is for --pick mbr, not --pick qe"),
        (("--pick", "qe", "--fast-mbr"), "--fast-mbr is for --pick mbr, not --pick qe"),
        (("--pick", "mbr", "--utility", "chrf", "--qe-metric", "metricx"), "--qe-metric is for"),
        (("--pick", "mbr", "--utility", "metricx"), "metricx-24-hybrid-large-v2p6"),
        (("--pick", "qe", "--qe-metric", "metricx", "--qe"), "metricx-24-hybrid-large-v2p6"),
        (("--pick", "qe"), "wmt22-cometkiwi-da"),  # the default QE model, not cached offline
        (("--pick", "qe", "--qe", str(GOOD)), "scores against a reference"),
        (("--pick", "mbr", "--utility", "comet", "--utility-model", str(KIWI)), "without a ref"),
        (
            ("--pick", "mbr", "--utility", "chrf", "--backend", "ct2", "--epsilon", "0.02"),
            "no epsilon sampling (--epsilon 0.02)",
        ),
        (("--pick", "mbr", "--utility", "chrf", "--fast-mbr", "--seed", "-1"), "--seed must be"),
        (("--pick", "mbr", "--utility", "chrf", "--seed", str(2**64)), "--seed must be"),
    ],
)
def test_bad_input_is_one_line(cli, marian, flags, said):
    done = cli("translate", "--model", str(marian), *flags, *SHORT, input=LINES)
    assert done.returncode in (2, 3), done.stderr  # 3: the Hub's, unreachable offline
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("workbench: error:")]
    assert len(errors) == 1, done.stderr
    assert said in errors[0]
    assert done.stdout == ""


def test_interact_shows_the_candidates_and_the_pick_in_80_columns(cli, marian, tmp_path):
    done = cli(
        "interact", "--model", str(marian), "--backend", "transformers", "--pick", "mbr",
        "--utility", "chrf", "--candidates", "12", *SHORT, input="I like tea.\n",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any("12 drawn" in line and "MBR on chrF (used to pick) ↑" in line for line in lines)
    answer = next(line for line in lines if "(used to pick) " in line and "ms)" in line)
    picked = next(line for line in lines if line.lstrip().startswith("»"))
    assert picked.split("×")[1].split(maxsplit=1)[1].rstrip("…") in answer
    listed = [line for line in lines if "×" in line and line.startswith("  ")]
    scores = [float(line.replace("»", " ").split()[0]) for line in listed]
    assert float(picked.replace("»", " ").split()[0]) == max(scores)
    assert len(listed) == 8  # at most 8 listed; the rest counted
    assert all(sum(2 if is_wide(ch) else 1 for ch in line) <= 80 for line in lines[6:])


def test_default_flags_on_an_export_sample_plainly_and_say_so(cli, marian):
    """--backend auto takes the export beside the model: CTranslate2, which has no epsilon."""
    flags = ("--model", str(marian), "--pick", "mbr", "--utility", "chrf", *SHORT)
    done = cli("translate", *flags, input=LINES)
    assert done.returncode == 0, done.stderr
    assert "backend: ctranslate2" in done.stderr
    notes = [line for line in done.stderr.splitlines() if "no epsilon sampling" in line]
    assert len(notes) == 1
    assert notes[0].startswith("note: ")
    assert len(done.stdout.splitlines()) == 4
    assert all(done.stdout.splitlines()[2:])
    console = cli("interact", *flags, input="I like tea.\nWhere is the station?\n")
    assert console.returncode == 0, console.stderr
    assert "could not translate" not in console.stdout
    assert (
        sum("(used to pick) " in line and "ms)" in line for line in console.stdout.splitlines())
        == 2
    )
    assert "no epsilon sampling" in console.stdout


def test_picks_stream_a_chunk_at_a_time(marian, tmp_path):
    """The first chunk's translations come out while stdin is still open."""
    from workbench.cli.translate import PICK_CHUNK

    started = subprocess.Popen(
        [sys.executable, "-m", "workbench", "translate", "--model", str(marian), "--backend",
         "transformers", "--pick", "mbr", "--utility", "chrf", "--candidates", "2", *SHORT],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=command_env(), cwd=tmp_path,
    )  # fmt: skip
    stdin, stdout = started.stdin, started.stdout
    assert stdin is not None
    assert stdout is not None
    try:
        stdin.write("I like tea.\n" * PICK_CHUNK)
        stdin.flush()
        # Were the lines read to EOF first, nothing would come until stdin closes: this
        # read would wait until pytest's timeout (pyproject's) fails the test.
        read = [stdout.readline() for _ in range(PICK_CHUNK)]
        assert all(line.strip() for line in read)
        assert started.poll() is None  # still reading its open stdin
    finally:
        started.kill()
        started.wait()


def test_one_bad_line_keeps_its_place_and_notices_are_said(marian):
    """A line that fails is said as plain translate says it and left empty; the others in
    its chunk are still picked, each with the notices translate gives it."""
    from workbench.cli.translate import run_picks
    from workbench.core.decoding import DecodeOptions
    from workbench.core.picking.metrics import chrf_metric
    from workbench.core.picking.picks import Picker
    from workbench.core.translate.candidates import CandidateSettings
    from workbench.core.translate.picked import PickSettings
    from workbench.core.translate.translator import Translator

    translator = Translator.from_pretrained(str(marian), device="cpu", backend="transformers")
    chrf = chrf_metric()

    def score(sources, hypotheses, references):
        if "explode" in sources:
            raise RuntimeError("injected")
        return chrf.score(sources, hypotheses, references)

    picker = Picker("mbr", replace(chrf, score=score))
    settings = PickSettings("mbr", utility="chrf", candidates=CandidateSettings(3))
    lines = ["I like tea.", "explode", "", "I like 🍵 every day."]
    out, err = io.StringIO(), io.StringIO()
    options = DecodeOptions(max_new_tokens=8)
    assert run_picks(translator, lines, options, settings, picker, True, out, err) == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["source"] for r in rows] == lines
    assert rows[1] == {"source": "explode", "translation": "", "picked_by": None, "candidates": []}
    assert rows[0]["translation"]
    assert rows[3]["translation"]
    assert "line 2: could not translate (RuntimeError: injected)" in err.getvalue()
    (notice,) = translator.translate(lines[3], options).notices
    assert f"line 4: {notice}" in err.getvalue().splitlines()
