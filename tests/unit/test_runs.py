"""Run folders read back (workbench.core.run_folder): the typed RunSummary and its one reader."""

from __future__ import annotations

import io
import json
from pathlib import Path

from workbench.cli.headless import HeadlessPrinter
from workbench.core.decoding import DecodeOptions
from workbench.core.events import JsonlRecorder, RunDone
from workbench.core.records.run_records import (
    AveragingRecord,
    BleuChrf,
    EpochLog,
    Precision,
    Sample,
)
from workbench.core.records.scores import SetScores
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.summary_file import is_finished, read_summary, write_summary
from workbench.core.views.numbers import number


def scores(role: str) -> SetScores:
    return SetScores(
        role=role,
        name="10% held out, seed 42",
        size=18,
        bleu_before=0.5,
        bleu_after=9.5,
        chrf_before=1.0,
        chrf_after=20.0,
        bleu_before_ci=[0.1, 0.9],
        bleu_after_ci=[8.0, 11.0],
        chrf_before_ci=[0.5, 1.5],
        chrf_after_ci=[18.0, 22.0],
        bleu_delta=9.0,
        bleu_delta_ci=[7.5, 10.5],
        bleu_p=0.001,
        chrf_delta=19.0,
        chrf_delta_ci=[17.0, 21.0],
        chrf_p=0.001,
        n_bootstrap=1000,
        bleu_signature="nrefs:1|bs:1000|tok:zh",
    )


def finished() -> RunSummary:
    return RunSummary(
        status="finished",
        preset="demo",
        model="scratch",
        data="hsk",
        train_pairs=144,
        validation_pairs=18,
        test_pairs=18,
        bleu_tokenize="zh",
        decoding=DecodeOptions(num_beams=4, max_new_tokens=64, no_repeat_ngram_size=3),
        precision=Precision(device="cpu", training="fp32", training_tf32=False),
        before={"test": BleuChrf(bleu=0.5, chrf=1.0)},
        train_seconds=12.3,
        global_step=18,
        run_dir="out/runs/x",
        base_model="out/runs/x/initial_model",
        test=scores("test"),
        validation=scores("validation"),
        distinct_after=0.9,
        best_checkpoint="ckpt/checkpoint-18",
        best_model="out/best_model",
        run_best_model="out/runs/x/best_model",
        samples=[Sample("I like tea.", "我喜欢茶。", "", "我喜欢茶。", 0.0, 100.0, 0.0, 100.0)],
        epochs=[EpochLog(epoch=1.0, step=9, eval_bleu=3.2)],
    )


def test_write_then_read_round_trips(tmp_path: Path):
    summary = finished()
    write_summary(tmp_path, summary)
    assert read_summary(tmp_path) == summary
    on_disk = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert on_disk["test"] == scores("test").to_dict()  # the same flat keys as always
    assert on_disk["global_step"] == 18
    assert on_disk["status"] == "finished"
    # missing: left out
    assert "error" not in on_disk
    assert "bleu_before" not in on_disk
    assert is_finished(tmp_path)


def test_an_older_or_odd_file_reads_with_none_for_what_it_lacks(tmp_path: Path):
    (tmp_path / "summary.json").write_text(
        json.dumps(
            {
                "status": "stopped",
                "global_step": "12",
                "train_seconds": 7,
                "samples": ["x", {}],
                "test": {"role": "test"},
                "unknown_key": 1,
            }
        ),
        encoding="utf-8",
    )
    notes: list[str] = []
    summary = read_summary(tmp_path, notes)
    assert summary is not None
    assert summary.status == "stopped"
    assert summary.global_step is None  # ill-typed: not trusted
    assert summary.train_seconds == 7
    assert summary.samples == []  # neither entry is a sample
    assert summary.test is None
    assert summary.validation is None
    assert summary.best_model is None
    assert not is_finished(tmp_path)
    # Each decision is said: the ill-typed value, the dropped samples, the torn scores and
    # the key no field has.
    assert "summary.json.global_step: '12' is ill-typed; read as missing" in notes
    assert "summary.json.samples[0]: an ill-formed record dropped" in notes
    assert "summary.json.samples[1]: an ill-formed record dropped" in notes
    assert "summary.json.test: no 'name'; the record is read as missing" in notes
    assert "summary.json: unknown key 'unknown_key' ignored" in notes
    (tmp_path / "summary.json").write_text("[1, 2]", encoding="utf-8")
    assert read_summary(tmp_path) is None
    assert read_summary(tmp_path / "nowhere") is None


def test_missing_scores_print_as_a_dash_never_zero():
    out = io.StringIO()
    HeadlessPrinter(out)(RunDone("finished", "out/runs/x", RunSummary(status="finished")))
    text = out.getvalue()
    assert "test: BLEU — · chrF — (not in the summary)" in text
    assert "training —; best epoch — (by validation BLEU); best model: —" in text
    assert "0.00" not in text

    assert number(None) == "—"  # the report's tables


def test_the_full_summary_still_prints_its_headline():
    out = io.StringIO()
    HeadlessPrinter(out)(RunDone("finished", "out/runs/x", finished()))
    text = out.getvalue()
    assert "test (10% held out, seed 42, 18): BLEU 0.50 → 9.50" in text
    assert "training 12s; best epoch 1 (by validation BLEU); best model: out/best_model" in text
    assert "—" not in text


def test_metrics_jsonl_records_the_summary_as_summary_json_holds_it(tmp_path: Path):
    recorder = JsonlRecorder(tmp_path / "metrics.jsonl")
    recorder(RunDone("finished", "out/runs/x", finished()))
    record = json.loads((tmp_path / "metrics.jsonl").read_text(encoding="utf-8"))
    assert record["event"] == "RunDone"
    assert record["summary"] == finished().to_dict()


def test_a_status_outside_the_literal_reads_as_missing_and_unknown_keys_are_ignored():
    """``status`` is typed (:data:`EndStatus`): a hand-edited value never reaches a front
    end as if it were one of the three endings, and a key no field has is dropped."""
    edited = RunSummary.from_dict({"status": "finshed", "bleu_before": 0.02, "preset": "demo"})
    assert edited == RunSummary(preset="demo")
    assert RunSummary.from_dict({"status": "stopped"}).status == "stopped"


def test_the_closing_lines_say_when_the_model_is_an_average():
    import dataclasses

    out = io.StringIO()
    averaged = dataclasses.replace(
        finished(), averaging=AveragingRecord(k=2, which="best", kept="averaged", epochs=[1.0])
    )
    HeadlessPrinter(out)(RunDone("finished", "out/runs/x", averaged))
    assert (
        "training 12s; best epoch 1, model averaged over checkpoints (by validation BLEU); "
        "best model: out/best_model" in out.getvalue()
    )
