"""Scoring: :mod:`.metrics` (sacreBLEU, and the per-epoch BLEU the Trainer computes),
:mod:`.significance` (bootstrap intervals, paired tests), :mod:`.before_after` (the
before/after evaluation on validation and test) and :mod:`.baselines` (the model's
published score beside "before")."""
