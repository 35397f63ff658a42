"""The training loss on real target tokens only equals the model's own loss, gradients too."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")


def tiny_marian():
    from transformers import MarianConfig, MarianMTModel

    torch.manual_seed(0)
    config = MarianConfig(
        vocab_size=60,
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
        pad_token_id=59,
        eos_token_id=0,
        decoder_start_token_id=59,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
    )
    model = MarianMTModel(config)
    with torch.no_grad():  # a non-zero bias, so a missing bias would show in the loss
        model.final_logits_bias.normal_()
    return model


def padded_batch():
    """Four pairs of different lengths, labels padded with -100 as the collator does."""
    gen = torch.Generator().manual_seed(1)
    input_ids = torch.randint(2, 59, (4, 9), generator=gen)
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, 5:] = attention_mask[3, 2:] = 0
    input_ids[attention_mask == 0] = 59
    labels = torch.randint(2, 59, (4, 11), generator=gen)
    labels[0, 3:] = labels[2, 8:] = labels[3, 1:] = -100
    from transformers.models.marian.modeling_marian import shift_tokens_right

    # DataCollatorForSeq2Seq(model=...) adds these, as in run_training.
    decoder_input_ids = shift_tokens_right(labels, 59, 59)
    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "labels": labels,
        "decoder_input_ids": decoder_input_ids,
    }


def trainer_for(model, tmp_path: Path, label_smoothing: float = 0.0):
    from transformers import Seq2SeqTrainingArguments

    from workbench.core.train.trainer import WorkbenchTrainer

    args = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path),
        report_to="none",
        use_cpu=True,
        label_smoothing_factor=label_smoothing,
    )
    return WorkbenchTrainer(model=model, args=args)


def loss_and_grads(trainer, model, fast: bool):
    from transformers import Seq2SeqTrainer

    batch = padded_batch()
    model.train()
    model.zero_grad(set_to_none=True)
    items = batch["labels"].ne(-100).sum()
    if fast:
        loss = trainer.compute_loss(model, dict(batch), num_items_in_batch=items)
    else:
        loss = Seq2SeqTrainer.compute_loss(trainer, model, dict(batch), num_items_in_batch=items)
    loss.backward()
    return loss.detach(), {
        n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None
    }


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_real_token_loss_equals_the_trainers_own(tmp_path: Path, smoothing: float):
    model = tiny_marian()
    trainer = trainer_for(model, tmp_path, smoothing)
    rows: list[int] = []
    hook = model.get_output_embeddings().register_forward_hook(
        lambda _m, _a, out: rows.append(out.shape[0] if out.dim() == 2 else -1)
    )
    fast_loss, fast_grads = loss_and_grads(trainer, model, fast=True)
    slow_loss, slow_grads = loss_and_grads(trainer, model, fast=False)
    hook.remove()
    real = int(padded_batch()["labels"].ne(-100).sum())
    assert rows[0] == real  # the projection ran on the real tokens only ...
    assert rows[1] == -1  # ... and the Trainer's own path projected every position
    assert torch.isfinite(fast_loss)
    torch.testing.assert_close(fast_loss, slow_loss, rtol=1e-5, atol=1e-6)
    assert fast_grads.keys() == slow_grads.keys()
    assert len(fast_grads) > 10
    for name, grad in fast_grads.items():
        torch.testing.assert_close(grad, slow_grads[name], rtol=1e-4, atol=1e-6, msg=name)


def test_the_loss_is_divided_by_the_trainers_token_count(tmp_path: Path):
    """num_items_in_batch counts the global (accumulated, all-process) batch: honour it."""
    from transformers import Seq2SeqTrainer

    model = tiny_marian()
    model.train()
    real = padded_batch()["labels"].ne(-100).sum()
    plain = trainer_for(model, tmp_path)
    own = plain.compute_loss(model, padded_batch(), num_items_in_batch=real)
    doubled = plain.compute_loss(model, padded_batch(), num_items_in_batch=2 * real)
    torch.testing.assert_close(doubled, own / 2)
    # transformers' label-smoothing path honours the count too: the two agree on it.
    smoothed = trainer_for(model, tmp_path, 0.1)
    torch.testing.assert_close(
        smoothed.compute_loss(model, padded_batch(), num_items_in_batch=2 * real),
        Seq2SeqTrainer.compute_loss(smoothed, model, padded_batch(), num_items_in_batch=2 * real),
        rtol=1e-5,
        atol=1e-6,
    )


def test_outputs_and_evaluation_take_the_full_forward(tmp_path: Path):
    model = tiny_marian()
    trainer = trainer_for(model, tmp_path)
    model.train()
    loss, outputs = trainer.compute_loss(model, padded_batch(), return_outputs=True)
    assert outputs.logits.shape == (4, 11, 60)  # whole logits when the caller wants them
    model.eval()
    with torch.no_grad():
        eval_loss = trainer.compute_loss(model, padded_batch())
    torch.testing.assert_close(eval_loss, loss.detach())


def test_other_models_keep_the_trainers_loss(tmp_path: Path, monkeypatch):
    from workbench.core.train import loss as token_loss

    assert token_loss.supports(tiny_marian())
    subclass = type("LengthForced", (type(tiny_marian()),), {})  # as speed_bench/model.py
    assert token_loss.supports(subclass(tiny_marian().config))
    assert not token_loss.supports(torch.nn.Linear(2, 2))
    # A model it does not support takes the Trainer's own loss: every position projected.
    model = tiny_marian()
    trainer = trainer_for(model, tmp_path)
    expected, _ = loss_and_grads(trainer, model, fast=False)
    monkeypatch.setattr(token_loss, "supports", lambda _model: False)
    shapes: list[tuple[int, ...]] = []
    model.get_output_embeddings().register_forward_hook(
        lambda _m, _a, out: shapes.append(tuple(out.shape))
    )
    got, _ = loss_and_grads(trainer, model, fast=True)
    assert shapes == [(4, 11, 60)]
    torch.testing.assert_close(got, expected)
