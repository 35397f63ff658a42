"""``workbench interact --qe`` with a quality-estimation model that cannot load: one line
before the session starts, nothing translated. The scores beside each line are tested in
tests/unit/test_quality_estimate.py."""

from __future__ import annotations

from pathlib import Path


def test_interact_with_a_qe_model_that_cannot_load_says_so_before_the_session(
    cli, tiny_model_dir: Path, tmp_path: Path
):
    done = cli(
        "interact", "--model", str(tiny_model_dir), "--qe", str(tmp_path / "nowhere"),
        input="I like tea.\n",
    )  # fmt: skip
    assert done.returncode == 2
    assert "COMET model folder" in done.stderr
    assert "does not exist" in done.stderr
    assert "zh>" not in done.stdout  # nothing translated half-way
