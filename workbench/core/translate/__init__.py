"""Decoding: :mod:`.translator` (the Translator, on transformers or CTranslate2),
:mod:`.ct2` and :mod:`.ct2_export` (the CTranslate2 engine and its exports) and
:mod:`.history` (the console's history), :mod:`.judgements` (the user's verdicts on its
lines) and :mod:`.input_notices` (what is odd about a typed line)."""
