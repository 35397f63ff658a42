"""Preference data for ``train --objective best|cpo|dpo``: each training source's own
candidates, ranked by a metric, and the chosen and rejected translation of each.

It owns the records (:mod:`.records`: a source's ranked candidates, the preference chosen
from them for an objective, and ``preferences.jsonl``), the ranking (:mod:`.ranking`:
candidates generated as a pick generates them, scored by the ranker in batches), the
cache of ranked lines (:mod:`.cache`: keyed like prepared data, appended chunk by chunk,
resumed after a stop, sealed when whole) and the one call a run makes
(:mod:`.preference_set`: ranked or reused, chosen, counted, stoppable, with progress).
It generates through :mod:`workbench.core.translate` and scores through
:mod:`workbench.core.picking`'s metrics; the training on it is the train package's.
"""
