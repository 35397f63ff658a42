"""The app's tabbed panes, minus one race: a stale focus message that switches back.

Focusing a widget inside a ``TabPane`` makes Textual's ``TabbedContent`` show that pane:
the widget's focus travels up as ``TabPane.Focused`` through several message queues.
When the user switches panes while such a message is still on its way (F2 pressed just as
the Dataset table takes focus after start-up), the late message switched the app back to
the pane the user had left, and the next key (``s`` for Start) went nowhere. That happened
under load in the Pilot tests and can happen to a quick user on a slow machine.
"""

from __future__ import annotations

from textual.widgets import TabbedContent, TabPane


class PaneTabs(TabbedContent):
    """A ``TabbedContent`` that follows focus only while the focus is still in that pane."""

    def on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        """Drop a late focus message, whose widget no longer has the focus (module docstring)."""
        focused = self.screen.focused
        if focused is None or event.tab_pane not in focused.ancestors:
            event.stop()
            event.prevent_default()  # skips TabbedContent's handler, which would switch
