"""Decoding: :mod:`.translator` (the Translator, on transformers or CTranslate2),
:mod:`.ct2` and :mod:`.ct2_export` (the CTranslate2 engine and its exports), a pick's
candidates (:mod:`.candidates`: the n-best, samples or both, counted; :mod:`.candidate_memory`:
what they cost, checked first), and the
console: :mod:`.console_session` (one session, the core of ``interact`` and the TUI's
Translate pane), :mod:`.history` (its history file), :mod:`.console_lines` (the history
lines of one run, for its report), :mod:`.judgements` (the user's verdicts on its lines),
:mod:`.quality` (--qe: a reference-free score beside each) and :mod:`.input_notices` (what
is odd about a typed line)."""
