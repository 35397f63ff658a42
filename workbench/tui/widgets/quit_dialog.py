"""What to do with a run that is training when the user quits: the one question asked.

Stop it with a checkpoint (``--resume`` continues it), keep it training in the background
(it is stopped with a checkpoint and continued at once, bit for bit, by a detached process
that outlives this terminal), or stay.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

#: The answers, as the dialog returns them.
STOP, BACKGROUND, STAY = "stop", "background", "stay"


class QuitDialog(ModalScreen[str]):
    """Asks whether quitting stops the run, hands it to the background, or is cancelled."""

    DEFAULT_CSS = """
    QuitDialog { align: center middle; }
    QuitDialog > Vertical {
        width: 64; height: auto; padding: 1 2; border: thick $warning; background: $panel;
    }
    """
    BINDINGS = [
        Binding("s", "answer('stop')", "Stop with a checkpoint"),
        Binding("b", "answer('background')", "Keep training in the background"),
        Binding("c,escape", "answer('stay')", "Cancel"),
    ]

    def __init__(self, run_name: str) -> None:
        super().__init__()
        self.run_name = run_name

    def compose(self) -> ComposeResult:
        """The question, and the three answers with their keys."""
        with Vertical():
            yield Static(
                f"{self.run_name} is training. Quit and\n\n"
                "s  stop it with a checkpoint\n"
                "   (workbench train --resume goes on)\n"
                "b  keep it training in the background\n"
                "   (workbench tui attaches to it, workbench stop stops it)\n"
                "c  cancel: stay here",
                markup=False,
            )

    def action_answer(self, answer: str) -> None:
        """s, b or c: close the dialog with the answer, which the app acts on."""
        self.dismiss(answer)
