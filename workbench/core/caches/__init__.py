"""What the workbench keeps on disk to build again, as one list: each entry of each cache
(prepared data, "before" translations, Hub samples, ranked preference lines, and the
attention views kept in run folders) with its size, last use and the runs that used it,
and the pruning that frees space without touching what a live run or a reading process
uses (``workbench cache``, ``workbench cache prune``). The record of each use is written
where the caches are read, through :mod:`workbench.core.cache_use`."""
