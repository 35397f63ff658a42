"""COMET, the MT field's neural metric, on plain torch and transformers 5: Unbabel's
checkpoints read (:mod:`.settings`, :mod:`.files`, :mod:`.checkpoint`), their network
rebuilt (:mod:`.network`), segments tokenized and batched as unbabel-comet 2.2.7 does
(:mod:`.inputs`), and scored (:mod:`.scorer`), with the memory it will take said before any
weight is read (:mod:`.plan`). unbabel-comet itself pins transformers < 5, so it cannot be
installed beside the workbench; ``tests/fixtures/comet`` holds its own scores to match."""
