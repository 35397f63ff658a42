"""The decoding-strategy study (workbench.core.lab.decoding_strategies) on a tiny model.

The tests that train (or build), split from tests/unit/test_lab_decoding.py, whose other tests
do not.
"""

from __future__ import annotations

import json

from workbench.core.lab.decoding_strategies import (
    STRATEGIES,
)
from workbench.core.run_folder.layout import RunFolder


def test_cli_prints_the_table_chart_and_findings_and_saves_json(cli, run_with_model):
    run, model = run_with_model
    where = run.parent.parent.parent  # where training ran: run_dir is relative
    done = cli("lab", "decoding", "--model", str(model), "--limit", "3", cwd=where)
    assert done.returncode == 0
    out = done.stdout
    assert "decoding strategies on the first 3 sentences" in out
    for strategy in STRATEGIES:
        assert f"\n{strategy.name}" in out
    assert "BLEU against time per sentence" in out
    assert "\x1b[" not in out
    assert "one sentence under every strategy" in out
    assert "the highest BLEU is" in out
    saved = json.loads(RunFolder(run).lab_study("decoding").read_text(encoding="utf-8"))
    assert len(saved["results"]) == len(STRATEGIES)
    assert saved["size"] == 3
