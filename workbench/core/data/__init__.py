"""Sentence pairs: :mod:`.pairs` (HSK, cleaning, the split) over :mod:`.local_files` (the
formats of local data), :mod:`.tokenize` (for training), :mod:`.hub` (reaching the Hub and
saying why not) and a seeded Hub sample (:mod:`.hub_sample` with :mod:`.sample_plan`,
:mod:`.sample_reads`, :mod:`.parquet_files`, :mod:`.sample_cache`)."""
