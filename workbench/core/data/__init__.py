"""Sentence pairs: :mod:`.pairs` (local files, HSK, cleaning, the split), :mod:`.tokenize`
(for training), :mod:`.hub` (reaching the Hub and saying why not) and a seeded Hub sample
(:mod:`.hub_sample` with :mod:`.sample_plan`, :mod:`.parquet_reads`, :mod:`.sample_cache`)."""
