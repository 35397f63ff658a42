"""Picking one translation among several candidates: the metrics a pick is ranked by
(:mod:`.metrics`: chrF, BLEU, COMET and CometKiwi as small objects, and the one place
MetricX plugs in), minimum Bayes risk (:mod:`.mbr`: full, and pruned by bootstrap), and
the pick itself (:mod:`.picks`: QE reranking or MBR over deduplicated candidates, ties
broken by one rule), worded for the console (:mod:`.pick_text`). It sees only text: the
candidates are generated in :mod:`workbench.core.translate.candidates`."""
