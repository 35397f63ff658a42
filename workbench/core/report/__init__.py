"""The hand-in report of a run: :mod:`.contents` (what it holds), :mod:`.read` (reading a
run folder into it), :mod:`.cells` and :mod:`.lab_blocks` (its facts and tables as text)
and :mod:`.render` (markdown and self-contained HTML)."""
