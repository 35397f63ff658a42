"""Attention maps: :mod:`.grid` (views of the weights: layer/head choice, pieces merged
into words), :mod:`.extract` (cross-attention taken from a model), :mod:`.causal` (a
decoder-only model's self-attention over the source inside its prompt), :mod:`.eager`
(weights returned for one pass), :mod:`.heatmap` (terminal text) and :mod:`.figures` (SVG
and PNG)."""
