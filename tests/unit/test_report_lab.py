"""The report's Lab section, read from the study files a run folder holds: the decoding
study's quality-aware arms, as a table in report.md and report.html alike."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.fixtures.record_tiny_run import RUN_NAME
from tests.fixtures.record_tiny_run import TARGET as RECORDED_RUN
from workbench.core.lab.decoding_strategies import DecodingStudy, StrategyResult
from workbench.core.lab.picked_arms import PickResult
from workbench.core.report.read import build_report
from workbench.core.report.render import render_html, render_markdown
from workbench.core.run_folder.layout import RunFolder

#: The header of the arms' table as report.md writes it.
PICKS_HEADER = (
    "| Arm | Picked by | BLEU (95% CI) | p vs greedy | chrF (95% CI) | Distinct a sentence "
    "| Length ratio | ms/sentence | × beam 4 | Candidates/s | Pick ms/sentence |"
)


def strategy(name: str, bleu: float, ms: float) -> StrategyResult:
    return StrategyResult(
        name, False, bleu, [bleu - 1, bleu + 1], 12.0, [11.0, 13.0], 0.2, [bleu], 0.9, 0.0,
        0.0, 1.0, ms, ["我喜欢茶。"],
    )  # fmt: skip


def arm(name: str, picked_by: str, metric: str, times_beam: float | None) -> PickResult:
    return PickResult(
        name=name, picked_by=picked_by, metric=metric, candidates=8, distinct=5.25,
        bleu=9.87, bleu_ci=[8.12, 11.43], chrf=13.21, chrf_ci=[12.05, 14.36], bleu_p=0.0421,
        length_ratio=0.97, ms_per_sentence=61.5, scoring_ms_per_sentence=4.31,
        candidates_per_second=212.0, times_beam=times_beam, example=["我喜欢喝茶。"],
        chrf_p=0.0031,
    )  # fmt: skip


def picks_rows(markdown: str) -> list[str]:
    """The rows of report.md's arms table."""
    return markdown.split(PICKS_HEADER, 1)[1].split("\n\n", 1)[0].splitlines()[2:]


def saved_study(tmp_path: Path, picks: list[PickResult]) -> Path:
    """A copy of the recorded run with a decoding study (greedy, beam 4 and ``picks``)."""
    run = tmp_path / "runs" / RUN_NAME
    shutil.copytree(RECORDED_RUN, run)
    study = DecodingStudy(
        "best_model", str(run), 12, "zh", "I like tea.", "我喜欢茶。",
        [strategy("greedy", 9.5, 4.0), strategy("beam 4", 10.25, 18.75)], picks,
    )  # fmt: skip
    path = RunFolder(run).lab_study("decoding")
    path.write_text(json.dumps(study.to_dict()), encoding="utf-8")
    return run


def test_the_decoding_studys_picks_are_a_table_with_the_picking_metric_marked(tmp_path: Path):
    """Each arm's row: the metric that picked it marked "(used to pick)", in its own cell
    and in the picked-by cell, the other metric unmarked, and the cost columns."""
    picks = [
        arm("mbr chrF N=8", "mbr:chrF", "chrF", 3.28),
        arm("mbr BLEU N=8", "mbr:BLEU", "BLEU", 3.41),
        arm("qe N=8", "qe:CometKiwi-22", "CometKiwi-22", None),
    ]
    report = build_report(saved_study(tmp_path, picks), with_attention=False)
    markdown, page = render_markdown(report), render_html(report)
    bleu, chrf = "9.87 (8.12…11.43)", "13.21 (12.05…14.36)"
    cost = "| 5.25 | 0.97 | 61.5 | {times} | 212 | 4.3 |"
    p_chrf_arm = "BLEU: p = 0.042; chrF (used to pick): p = 0.003"
    p_bleu_arm = "chrF: p = 0.003; BLEU (used to pick): p = 0.042"
    rows = [
        f"| mbr chrF N=8 | mbr: chrF (used to pick) | {bleu} | {p_chrf_arm} | {chrf}, chrF (used "
        f"to pick) {cost.format(times='3.3×')}",
        f"| mbr BLEU N=8 | mbr: BLEU (used to pick) | {bleu}, BLEU (used to pick) | {p_bleu_arm} "
        f"| {chrf} {cost.format(times='3.4×')}",
        f"| qe N=8 | qe: CometKiwi-22 (used to pick) | {bleu} | BLEU: p = 0.042 | {chrf} "
        f"{cost.format(times='—')}",
    ]
    assert picks_rows(markdown) == rows
    assert "Quality-aware arms: 8 sampled candidates a sentence (seed 0)" in markdown
    assert markdown.index("| beam 4 |") < markdown.index(PICKS_HEADER)  # after the strategies

    marked = f"<td>{chrf}, chrF (used to pick)</td>"
    assert f"<td>mbr: chrF (used to pick)</td><td>{bleu}</td><td>{p_chrf_arm}</td>{marked}" in page
    assert "<th>× beam 4</th><th>Candidates/s</th><th>Pick ms/sentence</th>" in page
    assert '<td>3.3×</td><td class="num">212</td><td class="num">4.3</td>' in page


def test_a_study_saved_without_chrf_p_still_reads_and_says_it_is_missing(tmp_path: Path):
    """The BLEU arm's p of BLEU is the picker's own test: it is marked, never shown as the
    arm's; where a saved study lacks chrF's p, the row says so."""
    run = saved_study(tmp_path, [arm("mbr BLEU N=8", "mbr:BLEU", "BLEU", 3.41)])
    path = RunFolder(run).lab_study("decoding")
    saved = json.loads(path.read_text(encoding="utf-8"))
    for pick in saved["picks"]:
        del pick["chrf_p"]
    path.write_text(json.dumps(saved), encoding="utf-8")
    report = build_report(run, with_attention=False)
    assert not report.lab.unreadable
    (row,) = picks_rows(render_markdown(report))
    assert row.split(" | ")[3] == "chrF: —; BLEU (used to pick): p = 0.042"


def test_a_study_without_picks_has_no_picks_table(tmp_path: Path):
    report = build_report(saved_study(tmp_path, []), with_attention=False)
    markdown = render_markdown(report)
    assert "| beam 4 |" in markdown
    assert "× beam 4" not in markdown
    assert "Quality-aware arms" not in markdown
