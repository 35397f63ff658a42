"""A run trained past the references (``--objective``) as the report, compare and ``runs``
show it: the ranker marked "(used to rank)" and never leading, the lead judge first with
the Kocmi reading on its row alone, the ceiling and the share of it kept, and the
objective with its ranker beside each run. Summaries are written by hand (fixed numbers);
a run without an objective is shown as it always was."""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path

from tests.helpers.ranked_runs import ranked_summary, write_ranked_run
from workbench.core.report.read import build_report
from workbench.core.report.render import render_html, render_markdown
from workbench.core.views.document import escape_markdown


def _rows(markdown: str, after: str) -> list[list[str]]:
    """The cells of the first table after the line ``after``."""
    section = markdown.split(after, 1)[1].split("\n\n")
    table = next(part for part in section if part.startswith("|"))
    return [
        [cell.strip() for cell in line.strip("|").split(" | ")] for line in table.splitlines()[2:]
    ]


def _test_rows(markdown: str) -> list[list[str]]:
    """The test set's rows of the report's before/after table, without the Set cell."""
    table = _rows(markdown, "## BLEU before vs after fine-tuning")
    return [row[1:] for row in table if row[0].startswith("test")]


def _report(tmp_path: Path, **summary) -> tuple[str, str]:
    run = write_ranked_run(
        tmp_path / "runs" / "20260102-000000-demo-cpo", ranked_summary(**summary)
    )
    report = build_report(run, with_attention=False)
    return render_markdown(report), render_html(report)


def test_the_report_marks_the_ranker_and_leads_with_another_judge(tmp_path: Path):
    md, page = _report(tmp_path)
    assert "## Trained past the references" in md
    facts = dict(_rows(md, "## Trained past the references"))
    assert facts["Objective"].startswith("cpo: preference pairs")
    assert facts["Ranked by"] == escape_markdown("chrF (used to rank), --rank-by chrf")
    assert facts["Candidates a source"] == "8, sampled"
    assert (facts["Sources ranked"], facts["Pairs trained on"]) == ("300", "280")
    assert facts["Skipped (no preference to learn)"] == "20"
    assert (facts["Beta"], facts["NLL weight"]) == ("0.1", "1")
    assert "`preferences.jsonl` in the run folder" in md
    # no neural judge: BLEU leads (the surface metric that did not rank), chrF marked
    assert "never lead the verdict" in md
    # the report's before/after table judges the test set so; the section adds no copy
    section = md.split("## Trained past the references")[1].split("### The ceiling")[0]
    assert "(lead judge)" not in section
    rows = _test_rows(md)
    labels = [row[0] for row in rows]
    assert labels == [
        "BLEU (lead judge)",
        escape_markdown("chrF (used to rank)"),
        escape_markdown("chrF++ (of the ranker's family)"),
        "TER (lower is better)",
    ]
    humans = [row[-1] for row in rows]
    assert humans[0].startswith("humans agree")
    assert humans[1:] == ["—", "—", "—"]  # never on the ranker nor the others
    assert "COMET or MetricX was not scored in this run" in md
    assert "on BLEU, the lead judge: +1.00" in md
    assert "chrF (used to rank)" in html.unescape(page)


def test_the_report_shows_the_ceiling_and_the_share_of_it_kept(tmp_path: Path):
    md, _ = _report(tmp_path)
    ceiling = md.split("### The ceiling: the starting model picking by the ranker", 1)[1]
    assert "picked by mbr:chrF among 8 sampled candidates a line (62% distinct)" in ceiling
    rows = _rows(ceiling, "beam search alone.")
    assert [row[0] for row in rows] == ["BLEU (lead judge)", escape_markdown("chrF (used to pick)")]
    assert rows[0][1:3] == ["10.00 (9.00…11.00)", "12.00 (11.00…13.00)"]
    assert "the tuned model kept 50% of that gain with beam search alone (BLEU)" in ceiling


def test_a_neural_judge_of_another_family_leads_the_report_where_scored(tmp_path: Path):
    md, _ = _report(tmp_path, comet=True)
    rows = _test_rows(md)
    assert rows[0][0] == escape_markdown("COMET-22 (Unbabel/wmt22-comet-da) (lead judge)")
    assert [row[0] for row in rows[1:3]] == ["BLEU", escape_markdown("chrF (used to rank)")]
    assert rows[0][-1].startswith("humans agree")
    assert all(row[-1] == "—" for row in rows[1:])
    assert "no independent neural judge" not in md
    # the headline table and the key facts follow the same rule
    headline = _rows(md, "## BLEU before vs after fine-tuning")
    assert [row[1] for row in headline][:2] == [
        escape_markdown("COMET-22 (Unbabel/wmt22-comet-da) (lead judge)"),
        "BLEU",
    ]
    assert sum(row[-1] != "—" for row in headline) == 1
    facts = dict(_rows(md, "## Summary"))
    (reading,) = [v for k, v in facts.items() if k.startswith("What humans would say")]
    assert reading.startswith("COMET-22 +0.80")
    assert "chrF" not in reading


def test_best_says_targets_and_leaves_out_what_it_does_not_set(tmp_path: Path):
    md, _ = _report(tmp_path, objective="best")
    facts = dict(_rows(md, "## Trained past the references"))
    assert facts["Best targets trained on"] == "280"
    assert "Beta" not in facts
    assert "NLL weight" not in facts


def test_a_run_without_an_objective_has_no_such_section_and_no_marks(tmp_path: Path):
    summary = dataclasses.replace(ranked_summary(), objective=None, preset="demo")
    run = write_ranked_run(tmp_path / "runs" / "20260103-000000-demo", summary, preset="demo")
    md = render_markdown(build_report(run, with_attention=False))
    assert "Trained past the references" not in md
    assert "used to rank" not in md
    assert "lead judge" not in md
    headline = _rows(md, "## BLEU before vs after fine-tuning")
    assert [row[1] for row in headline][:2] == ["BLEU", "chrF"]
    assert all(row[-1] != "—" for row in headline[:2])  # every reading, as ever


def test_runs_lists_the_objective_and_its_ranker_after_the_status(tmp_path: Path):
    from workbench.core.experiments.table import list_runs, run_row_line
    from workbench.core.records.summary import RunSummary

    runs = tmp_path / "out" / "runs"
    write_ranked_run(runs / "20260102-000000-demo-cpo", ranked_summary())
    plain = dataclasses.replace(ranked_summary(), objective=None, preset="demo")
    write_ranked_run(runs / "20260101-000000-demo", plain, preset="demo")
    # begun, no summary yet: its config's --rank-by value is all there is
    write_ranked_run(runs / "20260103-000000-demo-cpo", RunSummary(status="stopped"))
    begun, ranked, sft = list_runs(tmp_path / "out")
    assert (ranked.objective, ranked.ranker) == ("cpo", "chrF")
    assert run_row_line(ranked).startswith(
        "20260102-000000-demo-cpo  demo-cpo  finished  cpo · chrF  "
    )
    assert run_row_line(begun).startswith(
        "20260103-000000-demo-cpo  demo-cpo  stopped  cpo · chrf  "
    )
    assert run_row_line(sft).startswith("20260101-000000-demo  demo  finished  28 epochs")
    assert "sft" not in run_row_line(sft)
    assert ranked.to_dict()["ranker"] == "chrF"
    assert sft.to_dict()["objective"] == "sft"


def test_compare_shows_each_objective_and_marks_the_metric_that_ranked(tmp_path: Path):
    """Recorded runs A and B, B made a cpo run ranked by chrF (its config and summary):
    the runs table and the settings say so, a note says the objectives differ, and chrF
    (and its kin) carry B's mark, with no Kocmi reading, wherever a metric is shown."""
    import json

    from tests.helpers.runs import recorded_compare_runs
    from workbench.core.experiments.compare.read import build_comparison
    from workbench.core.experiments.compare.render import render_markdown, render_text
    from workbench.core.records.run_records import as_json

    root = tmp_path / "out"
    a, b, c = recorded_compare_runs(root)
    folder = root / "runs" / b
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(
        json.dumps({**config, "objective": "cpo", "rank_by": "chrf"}), encoding="utf-8"
    )
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    record = ranked_summary().objective
    (folder / "summary.json").write_text(
        json.dumps({**summary, "objective": as_json(record)}), encoding="utf-8"
    )
    comparison = build_comparison([a, b], root)
    text, md = render_text(comparison), render_markdown(comparison)
    assert "| Run | Run id | Status | Objective |" in md
    assert f"| A | {a} | finished | sft |" in md
    assert f"| B | {b} | finished | cpo · chrF |" in md
    assert "| objective | none | cpo |" in md  # A's config predates the setting
    note = "The runs train towards different objectives (A: sft; B: cpo · chrF)"
    assert note in text
    assert note in md
    assert f"  B  {b}  demo  finished  cpo · chrF  4 epochs" in text
    marked = escape_markdown("chrF (used to rank, run B)")
    assert f"| {marked} (95% CI) |" in md  # the test table's column
    metrics = {row[1]: row for row in _rows(md, "no curve for chrF++, TER and MetricX-24).")}
    assert metrics[marked][-1] == "—"
    assert metrics[escape_markdown("chrF++ (of the ranker's family, run B)")][-1] == "—"
    assert metrics["BLEU"][-1].startswith("humans agree")
    plain = render_markdown(build_comparison([a, c], root))  # two runs on the references
    assert "different objectives" not in plain
    assert "used to rank" not in plain
    assert f"| B | {c} | finished | sft |" in plain


def test_runs_marks_a_ranker_it_shows_and_gives_it_no_human_reading(tmp_path: Path):
    """A run ranked by BLEU: ``runs`` shows its BLEU marked, with no Kocmi reading; the
    same run ranked by chrF (not shown there) gets BLEU's reading as any run does."""
    from workbench.core.experiments.table import list_runs, run_row_line

    runs = tmp_path / "out" / "runs"
    by_chrf = ranked_summary()
    assert by_chrf.objective is not None
    record = dataclasses.replace(by_chrf.objective, rank_by="bleu", ranker="BLEU")
    write_ranked_run(
        runs / "20260102-000000-demo-cpo", dataclasses.replace(by_chrf, objective=record)
    )
    write_ranked_run(runs / "20260101-000000-demo-cpo", by_chrf)
    by_bleu, chrf_ranked = list_runs(tmp_path / "out")
    line = run_row_line(by_bleu)
    assert "test BLEU (used to rank) " in line
    assert "humans agree" not in line.split("test BLEU (used to rank)")[1].split("  test ")[0]
    assert "humans agree" in run_row_line(chrf_ranked)


def test_runs_gives_a_ranked_runs_reading_on_its_lead_judge_alone(tmp_path: Path):
    """A chrF-ranked run scored with COMET: COMET leads (a neural judge of another family),
    so ``runs`` reads COMET's change and not BLEU's, as the run's lines and report do."""
    from workbench.core.experiments.table import list_runs, run_row_line

    write_ranked_run(tmp_path / "out" / "runs" / "20260101-000000-demo-cpo", ranked_summary(True))
    (row,) = list_runs(tmp_path / "out")
    line = run_row_line(row)
    bleu, comet = line.split("test BLEU ", 1)[1].split("  test COMET", 1)
    assert "humans agree" not in bleu
    assert "humans agree" in comet
