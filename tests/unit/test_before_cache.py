"""The "before" translations kept across runs: reused only for the same model, sentences
and decoding, and giving the same scores."""

from __future__ import annotations

from pathlib import Path


def test_the_weights_digest_tells_models_apart(tiny_model_dir: Path):
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from workbench.core.model.fingerprint import weights_digest

    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_model_dir)
    again = AutoModelForSeq2SeqLM.from_pretrained(tiny_model_dir)
    assert weights_digest(model) == weights_digest(again)
    with torch.no_grad():
        next(again.parameters()).view(-1)[0] += 1e-3
    assert weights_digest(model) != weights_digest(again)
