"""The records a run writes and every front end reads back, typed both ways: the run's
summary (``summary``), its status (``status``), the before/after scores of a set
(``scores``), a saved model's settings (``model_settings``, its workbench.json), the one
decoder that reads a record back from its JSON (``typed``) and the JSON and JSONL readers
that treat a torn or missing file as absent (``files``), so no reader works on a bare
dict. Where a run folder holds each record, and its reader and writer there, is
:mod:`workbench.core.run_folder`'s. Part of the core's base: it imports only the other
base parts.
"""
