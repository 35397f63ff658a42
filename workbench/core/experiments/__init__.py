"""Several runs: :mod:`.table` (``workbench runs``), :mod:`.compare` (runs side by side with
paired tests) and :mod:`.sweep` (an Optuna study of one recipe)."""
