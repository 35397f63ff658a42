"""Translation models: :mod:`.load` (a model and its tokenizer from a folder or the Hub, the
label check, fp32 decoding) and :mod:`.scratch` (the demo's small Marian built here)."""
