"""Sentence pairs: :mod:`.sources` (where they come from: HSK, local files, a Hub sample)
over :mod:`.local_files` (the formats of local data), :mod:`.cleaning` and :mod:`.splits`
(the rules, then the three splits), :mod:`.prepared` (a run's data prepared over Arrow and
cached, an entry built by :mod:`.prepared_entry`), :mod:`.tokenize` (for training),
:mod:`.hub` with :mod:`.hub_requests` and :mod:`.hub_retries` (reaching the Hub, retrying,
and saying why not) and a seeded Hub sample (:mod:`.hub_sample` with :mod:`.sample_plan`,
:mod:`.sample_reads`, :mod:`.parquet_files`, :mod:`.sample_cache`)."""
