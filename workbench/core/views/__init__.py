"""Every wording and drawing the front ends share: :mod:`.numbers`, :mod:`.score_text` and
:mod:`.event_text` (numbers, scores and events as text), :mod:`.document` (markdown/HTML
helpers and CSS), :mod:`.svg` and :mod:`.text_chart`, :mod:`.wide` (wide characters).
Imports no torch and nothing but the loose core modules."""
