"""Translation models: :mod:`.load` (a model and its tokenizer from a folder or the Hub, fp32
decoding), :mod:`.family` (the seam for model families: languages, label or prefix,
position bound, cache shape) and :mod:`.scratch` (the demo's small Marian built here)."""
