"""The memory plan: what a run's training step needs, from the model's config alone, held
against one device's memory before any weight is loaded. :mod:`.plan` plans a run, looks
for the flags that would make it fit and the GPUs that would fit it sharded, and refuses
one that will not; each model kind counts its own step, :mod:`.seq2seq` (an
encoder-decoder) and :mod:`.decoder_only` (a causal LM); :mod:`.shared` holds what both
count alike, :mod:`.sharded` what one rank of a ``--shard`` run holds of it."""
