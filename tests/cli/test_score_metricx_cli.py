"""``workbench score --metrics metricx,metricx-qe``: MetricX on any system's files, both
modes from one hybrid checkpoint, with the paired test COMET gets, lower is better said on
every line; and the refusals a MetricX model gets in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from scipy.stats import ttest_rel

from tests.helpers.paths import FIXTURES
from workbench.core.metricx.scorer import MetricXSettings, load_metricx

METRICX_FIXTURES = FIXTURES / "metricx"
TOKENIZER = METRICX_FIXTURES / "tokenizer"
SEGMENTS = json.loads((METRICX_FIXTURES / "segments.json").read_text(encoding="utf-8"))[:8]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Sources, references and two systems, one stripped segment a line."""
    folder = tmp_path_factory.mktemp("score-metricx")
    columns = {
        "src": [s["source"].strip() for s in SEGMENTS],
        "ref": [s["reference"].strip() for s in SEGMENTS],
        "a": [s["hypothesis"].strip() or "空" for s in SEGMENTS],
        "b": [s["reference"].strip()[:-1] or "空" for s in SEGMENTS],
    }
    for name, lines in columns.items():
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {name: folder / name for name in columns}


def read(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def arguments(files: dict[str, Path], model: Path) -> list[str]:
    return [
        "score", "--hyp", str(files["a"]), "--hyp", str(files["b"]), "--ref", str(files["ref"]),
        "--src", str(files["src"]), "--metrics", "metricx,metricx-qe", "--metricx", str(model),
        "--metricx-tokenizer", str(TOKENIZER),
    ]  # fmt: skip


def test_both_modes_score_each_segment_as_the_scorer_and_pair_b_with_a(cli, files, metricx_models):
    done = cli(*arguments(files, metricx_models["tiny-fp32"]), "--json")
    assert done.returncode == 0, done.stderr
    systems = json.loads(done.stdout)["systems"]
    scorer = load_metricx(MetricXSettings(str(metricx_models["tiny-fp32"]), str(TOKENIZER)))
    sources, references = read(files["src"]), read(files["ref"])
    segments = {}
    for system, name in zip(systems, ("a", "b"), strict=True):
        hypotheses = read(files[name])
        scores = {s["metric"]: s for s in system["scores"]}
        assert list(scores) == ["MetricX-24", "MetricX-24-QE"]
        with_ref = scorer.score(sources, hypotheses, references)
        alone = scorer.score(sources, hypotheses)
        assert scores["MetricX-24"]["segments"] == pytest.approx(with_ref, abs=1e-4)
        assert scores["MetricX-24-QE"]["segments"] == pytest.approx(alone, abs=1e-4)
        assert scores["MetricX-24"]["score"] == pytest.approx(
            sum(with_ref) / len(with_ref), abs=0.01
        )
        segments[name] = scores["MetricX-24"]["segments"]
    change = systems[1]["against_first"][0]
    assert change["metric"] == "MetricX-24"
    assert change["lower_is_better"] is True
    assert change["p"] == pytest.approx(ttest_rel(segments["b"], segments["a"]).pvalue, abs=1e-6)


def test_the_text_report_says_lower_is_better_and_reads_no_agreement(cli, files, metricx_models):
    done = cli(*arguments(files, metricx_models["tiny-fp32"]))
    assert done.returncode == 0, done.stderr
    model = metricx_models["tiny-fp32"]  # named as COMET's model is, then the direction
    assert f"\n  MetricX-24 ({model}; lower is better) " in done.stdout
    assert f"\n  MetricX-24-QE ({model}; lower is better) " in done.stdout
    assert "MetricX-24, MetricX-24-QE: lower is better" in done.stdout
    assert "humans" not in done.stdout  # no Kocmi curve for MetricX-24, COMET's never borrowed


def test_a_metricx_23_qe_checkpoint_with_references_is_one_line(
    cli, files, tmp_path, metricx_models
):
    folder = tmp_path / "metricx-23-qe-large-v2p0"
    shutil.copytree(metricx_models["tiny-fp32"], folder)
    args = arguments(files, folder)
    args[args.index("metricx,metricx-qe")] = "metricx"
    done = cli(*args)
    assert done.returncode != 0
    assert "is a QE MetricX-23 checkpoint" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_metricx_folder_without_its_tokenizer_is_one_line(cli, files, metricx_models):
    args = arguments(files, metricx_models["tiny-fp32"])[:-2]  # no --metricx-tokenizer
    done = cli(*args)
    assert done.returncode != 0
    assert "--metricx-tokenizer google/mt5-xl" in done.stderr
    assert "Traceback" not in done.stderr
