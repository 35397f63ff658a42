"""Translation models: :mod:`.load` (a model and its tokenizer from a folder or the Hub, fp32
decoding), :mod:`.family` (the registry of model families: which family a model is, its
codes, LoRA targets and position bound), :mod:`.direction` (a user's languages resolved
into what one model is told, and set on it), :mod:`.prompts` (a decoder-only model's
prompt), :mod:`.architecture` and :mod:`.meta_model` (a model's shape and parameters from
its config), :mod:`.blocks` (the units a sharded run gathers whole), :mod:`.fingerprint`
(what a model is, as a digest) and :mod:`.scratch` (the demo's small Marian built here)."""
