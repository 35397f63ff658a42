"""The Lab: the assignment's thinking questions answered by measurement on a trained model.

One module per study, each a plain function from a model folder to a result dataclass
that front ends print, chart and save: :mod:`.decoding_strategies` (greedy, beams,
sampling; run by :mod:`.decoding_run`, with the picks of :mod:`.picked_arms` beside them
and their cost), :mod:`.kv_cache` (the KV cache: time per token, and its size against the
formula, measured by :mod:`.cache_measures`) and :mod:`.attention_kinds` (encoder self-,
masked decoder self- and cross-attention).
"""
