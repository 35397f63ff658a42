"""``workbench train --objective`` refusing what cannot run in one line, with no traceback
and before any data is read or folder made: an objective from the scratch model, a
missing ranker, a ranker whose model is missing, fewer than two candidates, and DPO's
frozen reference beyond the memory plan (NLLB-200 3.3B's config, no weights). The
settings themselves are tested in tests/unit/test_objective.py."""

from __future__ import annotations

import pytest

from tests.helpers.cli import refused_in_one_line as one_line
from tests.helpers.memory import NEEDS, figure_in


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--model", "scratch", "--objective", "cpo", "--rank-by", "chrf"), "not --model scratch"),
        (("--objective", "dpo"), "--objective dpo needs --rank-by (qe, metricx-qe, comet"),
        (("--objective", "best", "--rank-by", "chrf", "--candidates", "1"), "--candidates must"),
        (
            ("--objective", "cpo", "--rank-by", "qe", "--qe-model", "/no/such/kiwi"),
            "/no/such/kiwi",
        ),
        (
            ("--objective", "cpo", "--rank-by", "metricx", "--metricx", "/no/such/metricx"),
            "/no/such/metricx",
        ),
    ],
)
def test_a_run_past_the_references_that_cannot_run_is_one_line(
    cli, tiny_model_dir, pairs_file, tmp_path, flags, said
):
    result = cli(
        "train", "--headless", "--model", str(tiny_model_dir), "--data", str(pairs_file),
        "--output-dir", str(tmp_path / "out"), "--no-interact", *flags, cwd=tmp_path,
    )  # fmt: skip
    assert said in one_line(result)
    assert not (tmp_path / "out" / "runs").exists()


def test_dpos_frozen_reference_beyond_the_plan_is_refused_where_cpo_goes_on(
    cli, nllb_3b_folder, pairs_file, tmp_path
):
    """At batch 16 × 128/128 in fp32 CPO's step is planned at about 106 GB and DPO's at
    about 119 GB, its frozen copy of the 3.3B weights (13.4 GB) on top: a 112 GB budget
    takes the one and refuses the other, naming the reference and --lora (whose reference
    is the model itself with its adapters off)."""

    def train(objective: str):
        return cli(
            "train", "--headless", "--model", str(nllb_3b_folder), "--data", str(pairs_file),
            "--source-lang", "en", "--target-lang", "zh", "--batch-size", "16",
            "--memory-budget", "112", "--objective", objective, "--rank-by", "chrf",
            "--output-dir", str(tmp_path / objective), "--no-interact", cwd=tmp_path,
        )  # fmt: skip

    line = one_line(train("dpo"))
    assert "will not fit" in line
    assert "DPO's reference 13.4" in line
    assert "--lora" in line
    assert figure_in(NEEDS, line) > 112
    cpo = train("cpo")
    assert "will not fit" not in cpo.stderr
    assert "chosen and rejected rows" in cpo.stdout  # its plan, then on to the weights
