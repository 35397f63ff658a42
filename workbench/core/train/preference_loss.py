"""The losses of ``train --objective cpo|dpo``: a translation's log-probability, and the
preference terms that compare a pair of them.

Both objectives score whole translations: a sequence's log-probability is the *sum* of
its target tokens' log-probabilities (padding and a decoder-only prompt left out), as
trl's ``CPOTrainer`` and ``DPOTrainer`` sum them (not averaged, so a longer translation
is not favoured by its length alone).

- **CPO** (ALMA-R: Xu et al., ICML 2024, arXiv 2401.08417): the preference term
  ``-log σ(β (log π(y_w|x) - log π(y_l|x)))`` plus ``nll_weight`` times the NLL of the
  preferred translation, the mean cross-entropy over its tokens. trl's ``CPOTrainer``
  with ``loss_type="sigmoid"``, ``label_smoothing=0`` and ``cpo_alpha = nll_weight``.
- **DPO** (Rafailov et al., 2023): ``-log σ(β ((π_w - ref_w) - (π_l - ref_l)))`` against a
  frozen reference model, trl's ``DPOTrainer`` with ``loss_type="sigmoid"``.

Each returns the loss and the two numbers a user watches while it trains, as trl logs
them: the reward accuracy (the share of pairs whose preferred translation the model now
rewards more) and the mean reward margin (β times the log-probability difference, the
reference's subtracted for DPO). The functions are plain torch: tested against trl's own
loss code on the same log-probabilities (tests/fixtures/preference_losses/).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from workbench.core.train.loss import IGNORE_INDEX


@dataclass(frozen=True)
class PreferenceLoss:
    """A preference batch's loss (with its graph) and the rewards' statistics (detached
    scalars): the share of pairs whose chosen side has the higher reward, and the mean
    reward margin."""

    loss: torch.Tensor
    accuracy: torch.Tensor
    margin: torch.Tensor


def sequence_logps(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Each row's summed log-probability of its label ids, over the positions whose label
    is not -100, in float32 whatever the logits' dtype.

    ``logits`` (batch, length, vocabulary) and ``labels`` (batch, length) are aligned:
    for a decoder-only model the caller shifts them (``logits[:, :-1]`` against
    ``labels[:, 1:]``).
    """
    real = labels.ne(IGNORE_INDEX)
    ids = labels.masked_fill(~real, 0).unsqueeze(-1)
    logits = logits.float()
    token_logps = logits.gather(-1, ids).squeeze(-1) - torch.logsumexp(logits, dim=-1)
    return (token_logps * real).sum(-1)


def token_nll(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy over every real token of the batch (labels not -100), in
    float32: CPO's NLL term on the chosen translations, as trl's ``CPOTrainer`` takes it."""
    return F.cross_entropy(
        logits.float().flatten(0, -2), labels.flatten(), ignore_index=IGNORE_INDEX
    )


def _preference(margins: torch.Tensor, beta: float) -> PreferenceLoss:
    """The mean sigmoid preference loss of ``margins`` (chosen minus rejected) scaled by
    ``beta``, and its statistics: the rewards' margins are ``beta * margins``."""
    rewards = beta * margins
    return PreferenceLoss(
        loss=-F.logsigmoid(rewards).mean(),
        accuracy=rewards.detach().gt(0).float().mean(),
        margin=rewards.detach().mean(),
    )


def cpo_loss(
    chosen_logps: torch.Tensor,
    rejected_logps: torch.Tensor,
    chosen_nll: torch.Tensor,
    beta: float,
    nll_weight: float,
) -> PreferenceLoss:
    """ALMA-R's CPO loss: the mean ``-log σ(β (chosen - rejected))`` over the pairs plus
    ``nll_weight`` times the chosen translations' NLL (:func:`token_nll`)."""
    preference = _preference(chosen_logps - rejected_logps, beta)
    return PreferenceLoss(
        preference.loss + nll_weight * chosen_nll, preference.accuracy, preference.margin
    )


def dpo_loss(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    reference_chosen: torch.Tensor,
    reference_rejected: torch.Tensor,
    beta: float,
) -> PreferenceLoss:
    """DPO's sigmoid loss: the mean ``-log σ(β ((π_w - ref_w) - (π_l - ref_l)))``; log 2
    while the policy is still the reference."""
    chosen = policy_chosen - reference_chosen
    rejected = policy_rejected - reference_rejected
    return _preference(chosen - rejected, beta)
