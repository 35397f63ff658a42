"""The records a run writes and every front end reads back, typed both ways: the run's
summary (``summary``), its status (``status``), the before/after scores of a set
(``scores``), a saved model's settings (``model_settings``, its workbench.json) and the
JSON and JSONL readers that treat a torn or missing file as absent
(``files``). Each record has ``to_dict`` and ``from_dict``, so no reader works on a bare
dict. Part of the core's base: it imports only the other base parts.
"""
