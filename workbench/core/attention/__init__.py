"""Cross-attention: :mod:`.grid` (views of the weights: layer/head choice, pieces merged
into words), :mod:`.extract` (the weights taken from a model), :mod:`.heatmap` (terminal
text) and :mod:`.figures` (SVG and PNG)."""
