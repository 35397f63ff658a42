"""Training loss computed on the real target tokens only, not on the padding.

MarianMTModel's forward projects *every* decoder position onto the vocabulary
(``lm_head``: d_model × 65,001 for opus-mt-en-zh) and then lets the cross-entropy ignore
the padded ones. With batches padded per batch, about a third of the target positions
are padding (536 of 1,648 in benchmarks/RESULTS.md's timed batches), and that projection
is the single largest matmul of a step (per token, 2 × 512 × 65,001 FLOPs forward: more
than the decoder stack's weight matmuls together). Here a forward pre-hook on the output
embedding keeps only the positions whose label is real, so the projection, the softmax
and their backward run on those rows alone.

The loss is cross-entropy summed over the real tokens and divided by their count
(``num_items_in_batch``, which the Trainer counts over the whole accumulated and, across
processes, global batch: the normalisation transformers intends for models that take
loss keyword arguments). In one process it is the same number as Marian's own loss. With
several processes it is the true mean over the global batch, as transformers'
label-smoothing path already gave; Marian's own loss ignores ``num_items_in_batch``, so
without label smoothing the Trainer multiplied its per-process mean by the number of
processes. Measured on opus-mt-en-zh's shape, one CPU thread, a 16 × 52/94 batch with
68% real target tokens: 14.3 s → 11.2 s per step.

The forward still goes through the (possibly DDP-wrapped) model, so gradient
synchronisation and autocast behave exactly as in the Trainer's own path.
"""

from __future__ import annotations

from typing import Any

IGNORE_INDEX = -100


def base_model(model: Any) -> Any:
    """The transformers model inside a peft model (a LoRA run's), or ``model`` itself: the
    one whose output embedding the gathering hook goes on."""
    get_base = getattr(model, "get_base_model", None)
    return get_base() if callable(get_base) else model


def tied_to_trainable(loss: Any, model: Any) -> Any:
    """``loss``, tied with a zero to the trainable weights when none took part in it.

    M2M100's and NLLB's configs may drop whole layers while training (LayerDrop): a LoRA
    step that drops every layer an adapter sits on computes its loss from frozen weights
    alone, and backward would fail. Tied, the step updates nothing, as the dropped
    layers' own gradients would have been zero.
    """
    if loss.requires_grad:
        return loss
    return loss + sum(p.sum() for p in model.parameters() if p.requires_grad) * 0.0


def supports(model: Any) -> bool:
    """Whether ``model`` (unwrapped) can take the real-token loss.

    MarianMTModel and its subclasses: its forward applies ``get_output_embeddings()`` to
    the decoder states and only adds a broadcast bias afterwards, so gathering the rows
    that projection sees is safe.
    """
    from transformers import MarianMTModel

    return isinstance(model, MarianMTModel)


def real_token_loss(
    wrapped: Any,
    model: Any,
    inputs: dict[str, Any],
    num_items_in_batch: Any = None,
    label_smoothing: float = 0.0,
) -> Any:
    """Mean cross-entropy over the labels that are not -100, projecting only those rows.

    ``wrapped`` is what the Trainer calls (DDP or the model itself); ``model`` is the
    unwrapped MarianMTModel, whose output embedding gets the gathering hook.
    """
    import torch.nn.functional as F

    inputs = dict(inputs)
    labels = inputs.pop("labels")
    keep = labels.ne(IGNORE_INDEX)
    if inputs.get("decoder_input_ids") is None:
        inputs["decoder_input_ids"] = model.prepare_decoder_input_ids_from_labels(labels=labels)

    def gather_real_rows(_module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        # .to(): with layers spread over devices, the head may sit apart from the labels.
        return (args[0][keep.to(args[0].device)], *args[1:])

    hook = model.get_output_embeddings().register_forward_pre_hook(gather_real_rows)
    try:
        logits = wrapped(**inputs, use_cache=False).logits  # (real tokens, vocabulary)
    finally:
        hook.remove()
    summed = F.cross_entropy(
        logits, labels[keep].to(logits.device), reduction="sum", label_smoothing=label_smoothing
    )
    count = num_items_in_batch if num_items_in_batch is not None else keep.sum()
    return summed / count
