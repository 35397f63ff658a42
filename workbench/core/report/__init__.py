"""The hand-in report of a run: :mod:`.model` (what it holds), :mod:`.build` (reading a
run folder into it) and :mod:`.render` (markdown and self-contained HTML)."""
