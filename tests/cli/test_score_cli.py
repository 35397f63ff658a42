"""``workbench score`` on two systems' files: paired results for BLEU, chrF, chrF++, TER and
COMET, in text and JSON, each number checked against the library that owns the metric
(sacreBLEU, unbabel-comet's scores through the fixture model, scipy's paired t-test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu
from scipy.stats import ttest_rel

from tests.helpers.cli import CommandLine
from tests.helpers.paths import FIXTURES
from workbench.core.comet.scorer import load_scorer

COMET_FIXTURES = FIXTURES / "comet"
SEGMENTS = json.loads((COMET_FIXTURES / "segments.json").read_text(encoding="utf-8"))
COMET = COMET_FIXTURES / "regression-mix-sparsemax"
QE = COMET_FIXTURES / "unified-kiwi"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Sources, references and two systems: the fixture's translations (A) and the
    references with their last character dropped (B), one segment a line."""
    folder = tmp_path_factory.mktemp("score")
    # Lines are stripped, as comet-score strips them; so the texts here are.
    sources = [s["src"].strip() for s in SEGMENTS]
    columns = {
        "src.en": sources,
        "ref.zh": [s["ref"].strip() for s in SEGMENTS],
        "a.zh": [s["mt"].strip() or "空" for s in SEGMENTS],
        "b.zh": [s["ref"].strip()[:-1] for s in SEGMENTS],
    }
    for name, lines in columns.items():
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {name: folder / name for name in columns}


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def scored_json(files: dict[str, Path]) -> dict:
    args = ["score", "--hyp", str(files["a.zh"]), "--hyp", str(files["b.zh"])]
    args += ["--ref", str(files["ref.zh"]), "--src", str(files["src.en"])]
    with pytest.MonkeyPatch.context() as patch:
        done = CommandLine(patch)(*args, "--comet", str(COMET), "--qe", str(QE), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def by_metric(system: dict) -> dict[str, dict]:
    return {score["metric"]: score for score in system["scores"]}


def test_every_metric_of_every_file_is_the_owning_librarys(files, scored_json):
    refs = lines(files["ref.zh"])
    assert scored_json["tokenize"] == "zh"  # the references are Chinese
    assert scored_json["segments"] == len(refs)
    for system, name in zip(scored_json["systems"], ("a.zh", "b.zh"), strict=True):
        hyps = lines(files[name])
        found = by_metric(system)
        assert set(found) == {"BLEU", "chrF", "chrF++", "TER", "COMET", "COMET-QE"}
        expected = {
            "BLEU": sacrebleu.corpus_bleu(hyps, [refs], tokenize="zh").score,
            "chrF": sacrebleu.corpus_chrf(hyps, [refs]).score,
            "chrF++": sacrebleu.corpus_chrf(hyps, [refs], word_order=2).score,
            "TER": sacrebleu.corpus_ter(hyps, [refs], asian_support=True).score,
        }
        for metric, value in expected.items():
            assert found[metric]["score"] == pytest.approx(value, abs=0.005), metric
            low, high = found[metric]["ci"]
            assert low <= found[metric]["score"] + 1e-9 or metric == "TER"
            assert low < high
            assert len(found[metric]["segments"]) == len(refs)
        comet = load_scorer(str(COMET), device="cpu").score(lines(files["src.en"]), hyps, refs)
        assert found["COMET"]["segments"] == pytest.approx([100 * c for c in comet], abs=1e-3)
        assert found["COMET"]["score"] == pytest.approx(100 * sum(comet) / len(comet), abs=0.01)
        assert found["COMET"]["model"] == str(COMET)


def test_b_against_a_is_paired_as_sacrebleu_and_comet_compare_pair_it(files, scored_json):
    first, second = scored_json["systems"]
    assert first["against_first"] == []
    changes = {c["metric"]: c for c in second["against_first"]}
    assert set(changes) == {"BLEU", "chrF", "chrF++", "TER", "COMET", "COMET-QE"}
    for metric in ("BLEU", "chrF", "chrF++", "TER"):
        assert changes[metric]["test"] == "paired bootstrap"
        assert changes[metric]["before"] == by_metric(first)[metric]["score"]
        assert changes[metric]["after"] == by_metric(second)[metric]["score"]
    assert changes["TER"]["lower_is_better"] is True
    for metric in ("COMET", "COMET-QE"):
        a, b = by_metric(first)[metric]["segments"], by_metric(second)[metric]["segments"]
        assert changes[metric]["test"] == "paired t-test"
        assert changes[metric]["p"] == pytest.approx(ttest_rel(b, a).pvalue, abs=2e-6)
        low, high = changes[metric]["delta_ci"]
        assert low <= changes[metric]["delta"] <= high


def test_the_text_report_pairs_b_with_a_and_reads_each_delta(cli, files):
    args = ["score", "--hyp", str(files["a.zh"]), "--hyp", str(files["b.zh"])]
    args += ["--ref", str(files["ref.zh"]), "--src", str(files["src.en"]), "--comet", str(COMET)]
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "BLEU tokenizer zh (the references are mostly zh script)" in out
    assert "B against A, paired on the same segments (A → B):" in out
    for metric in ("BLEU", "chrF", "chrF++", "TER (lower is better)"):
        assert f"\n  {metric} " in out, metric
    assert "paired t-test p" in out  # COMET's test, as comet-compare's
    assert "what humans would say (Kocmi et al. 2024): BLEU +" in out
    assert "signature BLEU: nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:zh" in out
    assert "COMET: " in done.stderr  # the progress lines go to stderr, not the report


def test_qe_alone_needs_only_the_sources(cli, files):
    done = cli(
        "score", "--hyp", str(files["a.zh"]), "--src", str(files["src.en"]), "--qe", str(QE),
        "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (system,) = json.loads(done.stdout)["systems"]
    assert [s["metric"] for s in system["scores"]] == ["COMET-QE"]
    assert json.loads(done.stdout)["tokenize"] is None  # no BLEU without references
