"""One widget (pane) per module."""
