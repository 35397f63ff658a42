"""Early stopping (``--early-stopping``): where it stops, what it says, resume and sweeps.

Validation BLEU is held constant by a learning rate too small to move any fp32 weight
(1e-12): transformers' EarlyStoppingCallback counts an equal BLEU as no gain, so a run
with patience P stops after epoch P + 1, its best being epoch 1.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.runs import small
from workbench.core.views.training_text import early_stopping_text


def test_the_line_when_the_patience_never_ran_out():
    from workbench.core.records.run_records import EarlyStopping

    outcome = EarlyStopping(
        patience=3,
        best_epoch=28.0,
        best_bleu=13.1,
        stopped_after_epoch=30.0,
        epochs_planned=30.0,
        stopped=False,
    )
    assert early_stopping_text(outcome) == (
        "early stopping (patience 3) did not trigger: all 30 epochs ran; "
        "the best was epoch 28 (13.10)"
    )


async def test_the_training_pane_shows_the_patience_and_the_averaging(tmp_path: Path):
    from textual.widgets import Static

    from tests.helpers.tui import show_pane
    from workbench.tui.app import WorkbenchApp

    app = WorkbenchApp(small(tmp_path, early_stopping=2, average_checkpoints=3, average="last"))
    async with app.run_test(size=(200, 30)) as pilot:
        await show_pane(pilot, "training")
        line = str(app.query_one("#train-config", Static).render())
        assert "early stopping: patience 2" in line
        assert "averaging the last 3 checkpoints" in line
