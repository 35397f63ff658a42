"""The hand-in report of a run: :mod:`.model` (what it holds), :mod:`.build` (reading a
run folder into it), :mod:`.cells` and :mod:`.lab_blocks` (its facts and tables as text)
and :mod:`.render` (markdown and self-contained HTML)."""
