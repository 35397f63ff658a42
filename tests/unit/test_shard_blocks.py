"""What ``--shard`` wraps, from the family seam: each family's transformer blocks (Marian's
and mBART's named by the registry, the rest by the model's own ``_no_split_modules``), and
the shared vocabulary table made one module, which computes the same."""

from __future__ import annotations

import pytest
import torch

from workbench.core.model.family import shard_blocks
from workbench.core.model.load import load_model_and_tokenizer
from workbench.core.train.sharding import one_embedding_module

SEQ2SEQ = {
    "nllb": ("M2M100DecoderLayer", "M2M100EncoderLayer"),
    "m2m100": ("M2M100DecoderLayer", "M2M100EncoderLayer"),
    "mbart50": ("MBartDecoderLayer", "MBartEncoderLayer"),  # not its attention
    "t5": ("T5Block",),
}
CAUSAL = {
    "qwen3": ("Qwen3DecoderLayer",),
    "llama": ("LlamaDecoderLayer",),
    "gemma": ("Gemma3DecoderLayer",),
    "mistral": ("MistralDecoderLayer",),
}


def test_marian_blocks_come_from_the_registry(tiny_model_dir):
    model, _ = load_model_and_tokenizer(str(tiny_model_dir))
    assert not getattr(model, "_no_split_modules", None)  # nothing to read there
    assert shard_blocks(model) == ("MarianDecoderLayer", "MarianEncoderLayer")


@pytest.mark.parametrize("family", sorted(SEQ2SEQ))
def test_seq2seq_blocks(family_models, family):
    model, _ = load_model_and_tokenizer(str(family_models[family]))
    assert shard_blocks(model) == SEQ2SEQ[family]


@pytest.mark.parametrize("family", sorted(CAUSAL))
def test_decoder_only_blocks(causal_models, family):
    model, _ = load_model_and_tokenizer(str(causal_models[family]))
    assert shard_blocks(model) == CAUSAL[family]


def test_the_shared_table_becomes_one_module_that_computes_the_same():
    """The scratch Marian as it is built (a loaded one has one module already)."""
    from transformers import MarianMTModel

    from tests.helpers.runs import tiny_config
    from workbench.core.model.scratch import scratch_model_config

    torch.manual_seed(0)
    model = MarianMTModel(scratch_model_config(tiny_config(), 50, 0, 1)).eval()
    inputs = {"input_ids": torch.randint(2, 50, (2, 7)), "labels": torch.randint(2, 50, (2, 5))}
    with torch.no_grad():
        before = model(**inputs).logits
    embedding = model.get_input_embeddings()
    modules = (
        model.model.shared,
        model.model.encoder.embed_tokens,
        model.model.decoder.embed_tokens,
    )
    assert len({id(m) for m in modules}) == 3  # three modules, one table
    assert model.model.encoder.embed_tokens is embedding
    assert all(m.weight is embedding.weight for m in modules)
    assert one_embedding_module(model) == 2  # `shared` and the decoder's
    assert model.model.shared is embedding
    assert model.model.decoder.embed_tokens is embedding
    assert one_embedding_module(model) == 0
    with torch.no_grad():
        after = model(**inputs).logits
    assert torch.equal(before, after)
