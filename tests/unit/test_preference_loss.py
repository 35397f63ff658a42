"""CPO's and DPO's losses against trl's own code (tests/fixtures/preference_losses/), and
a sequence's log-probability summed over its target tokens only."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from workbench.core.train.preference_loss import (
    cpo_loss,
    dpo_loss,
    sequence_logps,
    token_nll,
)

EXPECTED = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "preference_losses" / "expected.json").read_text(
        encoding="utf-8"
    )
)


def close(value: torch.Tensor, expected: float | list[float]) -> None:
    torch.testing.assert_close(
        value, torch.tensor(expected, dtype=torch.float32), atol=1e-6, rtol=1e-6
    )


@pytest.mark.parametrize("case", EXPECTED["cpo"], ids=lambda c: f"cpo-beta{c['beta']}")
def test_cpo_equals_trl(case: dict) -> None:
    logits, labels = torch.tensor(case["logits"]), torch.tensor(case["labels"])
    if not case["encoder_decoder"]:  # a decoder-only model's: the caller shifts
        logits, labels = logits[:, :-1], labels[:, 1:]
    logps = sequence_logps(logits, labels)
    close(logps, case["logps"])
    pairs = len(logps) // 2
    nll = token_nll(logits[:pairs], labels[:pairs])
    if case["nll"] is not None:
        close(nll, case["nll"])
    result = cpo_loss(logps[:pairs], logps[pairs:], nll, case["beta"], case["nll_weight"])
    close(result.loss, case["loss"])
    close(result.accuracy, case["accuracy"])
    close(result.margin, case["margin"])


@pytest.mark.parametrize("case", EXPECTED["dpo"], ids=lambda c: f"dpo-beta{c['beta']}")
def test_dpo_equals_trl(case: dict) -> None:
    policy_chosen, policy_rejected, reference_chosen, reference_rejected = (
        torch.tensor(case[side])
        for side in ("policy_chosen", "policy_rejected", "reference_chosen", "reference_rejected")
    )
    result = dpo_loss(
        policy_chosen, policy_rejected, reference_chosen, reference_rejected, case["beta"]
    )
    close(result.loss, case["loss"])
    close(result.accuracy, case["accuracy"])
    close(result.margin, case["margin"])


def test_dpo_is_log_two_while_the_policy_is_the_reference() -> None:
    logps = torch.tensor([-3.0, -10.0, -0.5])
    result = dpo_loss(logps, logps - 1, logps, logps - 1, beta=0.1)
    assert result.loss.item() == pytest.approx(math.log(2), abs=1e-6)
    assert result.accuracy.item() == 0.0


def test_sequence_logps_skips_ignored_positions_and_keeps_float32() -> None:
    logits = torch.randn(2, 4, 5, generator=torch.Generator().manual_seed(0)).bfloat16()
    labels = torch.tensor([[-100, 2, 3, -100], [1, -100, -100, -100]])
    expected = [
        sum(
            torch.log_softmax(logits[row, position].float(), -1)[labels[row, position]].item()
            for position in range(4)
            if labels[row, position] != -100
        )
        for row in range(2)
    ]
    logps = sequence_logps(logits, labels)
    assert logps.dtype == torch.float32
    close(logps, expected)


def test_the_loss_carries_gradients_to_the_logits() -> None:
    logits = torch.randn(2, 3, 4, requires_grad=True)
    labels = torch.tensor([[1, 2, -100], [0, 3, 3]])
    logps = sequence_logps(logits, labels)
    nll = token_nll(logits[:1], labels[:1])
    cpo_loss(logps[:1], logps[1:], nll, 0.1, 1.0).loss.backward()
    assert logits.grad is not None
    assert logits.grad[0, 2].abs().sum() == 0  # an ignored position gets no gradient
    assert logits.grad[1].abs().sum() > 0
