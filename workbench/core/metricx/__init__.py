"""MetricX (google-research/metricx), Google's mT5-based MT metric, on plain torch and
transformers 5: a checkpoint and its tokenizer found (:mod:`.files`), its tensors read
(:mod:`.checkpoint`) into ``MT5ForRegression`` rebuilt (:mod:`.network`), inputs written
and tokenized as its ``predict.py`` does (:mod:`.inputs`), and scored (:mod:`.scorer`),
lower is better, with the memory it will take said before any weight is read
(:mod:`.plan`). The metricx code pins transformers 4.30, so it cannot run beside the
workbench; ``tests/fixtures/metricx`` holds its own scores to match."""
