"""A preference run's rows and batches (workbench.core.train.preference_batches) on tiny
real models: the ids supervised training would make, one batch of chosen then rejected
rows, and a translation's log-probability the same padded in a batch as alone."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

ROWS = [
    ("I like tea.", "我喜欢茶。", "我喜欢。"),
    (
        "My brother is a doctor who works in a big hospital.",
        "我哥哥是医生。",
        "哥哥在大医院工作的医生是我的。",
    ),
    ("Good morning!", "早上好！", "晚上好！"),
]


def seq2seq(model_dir: Path):
    from transformers import AutoTokenizer, MarianMTModel

    from workbench.core.data.tokenize import PairTokenizer
    from workbench.core.languages import Direction

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = MarianMTModel.from_pretrained(model_dir).eval()
    return model, tokenizer, PairTokenizer(tokenizer, Direction(), 64, 64)


def decoder_only(model_dir: Path):
    from transformers import AutoModelForCausalLM

    from tests.helpers.causal_models import english_to_chinese
    from workbench.core.data.tokenize import PairTokenizer

    tokenizer, direction = english_to_chinese(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    return model, tokenizer, PairTokenizer(tokenizer, direction, 64, 64)


@pytest.fixture(params=["seq2seq", "decoder-only"])
def kind(request, tiny_model_dir, causal_models):
    if request.param == "seq2seq":
        return seq2seq(tiny_model_dir)
    return decoder_only(causal_models["qwen3"])


def test_each_side_is_tokenized_as_supervised_training_tokenizes_it(kind):
    from workbench.core.train.preference_batches import preference_dataset

    _, _, encoder = kind
    dataset, lengths = preference_dataset(ROWS, encoder)
    sources = [source for source, _, _ in ROWS]
    for side, index in (("chosen", 1), ("rejected", 2)):
        encoded = encoder.encode(sources, [row[index] for row in ROWS])
        for name in ("input_ids", "attention_mask", "labels"):
            assert dataset[f"{side}_{name}"] == encoded[name]
    for row in range(len(ROWS)):
        source = dataset["input_ids"][row]
        assert lengths[row] == len(source)
        if encoder.direction.causal:  # the prompt: the chosen row's start, unlabelled
            labels = dataset["chosen_labels"][row]
            assert dataset["chosen_input_ids"][row][: len(source)] == source
            assert set(labels[: len(source)]) == {-100}
            assert labels[len(source)] != -100
        else:
            assert source == dataset["chosen_input_ids"][row] == dataset["rejected_input_ids"][row]


def test_a_batch_is_the_chosen_rows_then_the_rejected(kind):
    from workbench.core.train.preference_batches import preference_collator, preference_dataset

    model, tokenizer, encoder = kind
    dataset, _ = preference_dataset(ROWS, encoder)
    batch = preference_collator(tokenizer, model, encoder.direction.causal)(list(dataset))
    assert len(batch["input_ids"]) == 2 * len(ROWS)
    for row, features in enumerate(dataset):
        for half, side in ((0, "chosen"), (len(ROWS), "rejected")):
            labels = batch["labels"][half + row]
            real = labels[labels.ne(-100)].tolist()
            assert real == [label for label in features[f"{side}_labels"] if label != -100]
    assert ("decoder_input_ids" in batch) != encoder.direction.causal


def test_an_evaluation_row_is_collated_as_supervised_training_collates_it(kind):
    from workbench.core.train.preference_batches import preference_collator

    model, tokenizer, encoder = kind
    encoded = encoder.encode(["I like tea.", "Good morning!"], ["我喜欢茶。", "早上好！"])
    rows = [
        {name: encoded[name][i] for name in ("input_ids", "attention_mask", "labels")}
        for i in (0, 1)
    ]
    batch = preference_collator(tokenizer, model, encoder.direction.causal)(rows)
    assert len(batch["input_ids"]) == 2
    assert batch["labels"][1][batch["labels"][1].ne(-100)].tolist() == [
        label for label in encoded["labels"][1] if label != -100
    ]


def logps_of(model, batch, causal: bool) -> torch.Tensor:
    from workbench.core.train.preference_loss import sequence_logps

    inputs = {k: v for k, v in batch.items() if k != "labels"}
    with torch.no_grad():
        logits = model(**inputs, use_cache=False).logits
    labels = batch["labels"]
    if causal:
        logits, labels = logits[:, :-1], labels[:, 1:]
    return sequence_logps(logits, labels)


def test_a_padded_rows_log_probability_is_its_own_alone(kind):
    """Sums over target tokens only: padding (and a decoder-only model's prompt) adds
    nothing, so each row of the padded batch scores as it does unpadded, alone."""
    from workbench.core.train.preference_batches import preference_collator, preference_dataset

    model, tokenizer, encoder = kind
    causal = encoder.direction.causal
    dataset, _ = preference_dataset(ROWS, encoder)
    collate = preference_collator(tokenizer, model, causal)
    together = logps_of(model, collate(list(dataset)), causal)
    alone = torch.cat([logps_of(model, collate([features]), causal) for features in dataset])
    order = [*range(0, 2 * len(ROWS), 2), *range(1, 2 * len(ROWS), 2)]  # alone: pairs in turn
    torch.testing.assert_close(together, alone[order], atol=1e-4, rtol=1e-5)
    assert bool((together < 0).all())
    batch = collate(list(dataset))
    assert len(set(batch["labels"].ne(-100).sum(-1).tolist())) > 1  # rows of several lengths
    assert not bool(batch["attention_mask"].all())  # so the batch is padded
