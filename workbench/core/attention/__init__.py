"""Cross-attention: the grids taken from a model and their heatmaps."""
