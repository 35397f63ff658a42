"""What the app makes for a user to hand in: a screenshot of the pane shown (F6), saved
into the newest run folder, and the newest finished run's report (F7).

The report shows the screenshots with their pane and time, and its heatmap the sentence
the Attention pane shows. Both keys are in the command palette too (Ctrl-P), which keeps
the footer within 80 columns in every pane.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import SystemCommand
from textual.screen import Screen
from textual.widgets import TabbedContent

from workbench.tui.widgets.attention_pane import AttentionPane

if TYPE_CHECKING:
    from textual.app import App

    #: Type checkers see the app this is mixed into; at run time it is a plain mixin.
    _MixedIntoApp = App[int]
else:
    _MixedIntoApp = object


class HandsIn(_MixedIntoApp):
    """The app's screenshots and reports, for a :class:`~textual.app.App` over an output
    folder."""

    output_root: Path

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette (Ctrl-P) also holds the keys the footer leaves out for room."""
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "Screenshot",
            "Save the screen as SVG into the newest run folder (F6)",
            self.action_screenshot,
        )
        yield SystemCommand(
            "Report",
            "Write the newest finished run's report.md and report.html (F7)",
            self.action_report,
        )

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """Save the screen as SVG (and PNG, with a converter) into the newest run folder
        (the output folder before any); the report shows it with its pane and time.
        ``filename`` and ``path``, Textual's, replace the name and folder when given."""
        from workbench.core.report.screenshots import screenshot_name, write_png
        from workbench.core.run_folder.output_folder import run_folders

        folders = run_folders(self.output_root)
        target = Path(path) if path else folders[0] if folders else self.output_root
        name = filename or screenshot_name(self.query_one(TabbedContent).active)
        try:
            target.mkdir(parents=True, exist_ok=True)
            saved = Path(self.save_screenshot(filename=name, path=str(target)))
        except OSError as err:
            self.notify(
                f"cannot save a screenshot in {target}: {err}", severity="error", markup=False
            )
            return
        png = write_png(saved)
        # File names on lines of their own: a toast breaks a long path mid-name.
        self.notify(
            "\n".join([name, *([f"and {png.name}"] if png else []), f"in {self.shown(target)}"]),
            title="Screenshot saved",
            markup=False,  # paths are not markup
        )

    def shown(self, folder: Path) -> str:
        """A folder as a notification names it: relative to the output folder if inside."""
        try:
            inside = folder.relative_to(self.output_root)
        except ValueError:
            return str(folder)
        return str(inside) if inside.parts else "the output folder"

    def action_report(self) -> None:
        """Write the newest finished run's report; the heatmap shows the Attention sentence."""
        pane = next(iter(self.query(AttentionPane)), None)  # None before it is mounted
        shown = pane.result if pane is not None else None
        self.notify("writing the run report…")
        self.write_report(shown.sentence if shown else None)

    @work(thread=True, exit_on_error=False, group="report")
    def write_report(self, sentence: str | None) -> None:
        """Build and write the report off the main thread (it loads the model)."""
        from workbench.core.report.write import create_report
        from workbench.core.run_folder.layout import REPORT_HTML, REPORT_MD

        report, _ = create_report(None, self.output_root, sentence)
        self.call_from_thread(
            self.notify,
            f"{REPORT_HTML} and {REPORT_MD}\nin {self.shown(report.run_dir)}",
            title="Report written",
            markup=False,
        )
