"""BLEU and chrF with sacreBLEU directly.

``evaluate.load("sacrebleu")`` downloads its script from the Hub at run time and fails
offline, so we call sacreBLEU (what that module wraps). Chinese needs ``tokenize="zh"``:
with the default ``13a`` tokenizer an unsegmented Chinese sentence is one token and BLEU
is ~0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from workbench.core.languages import Direction


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str], tokenize: str) -> float:
    """Corpus BLEU (0-100) of hypotheses against one reference each."""
    import sacrebleu

    if not hypotheses:
        return 0.0
    return float(
        sacrebleu.corpus_bleu(list(hypotheses), [list(references)], tokenize=tokenize).score
    )


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus chrF (0-100); character based, so no tokenizer choice is needed."""
    import sacrebleu

    if not hypotheses:
        return 0.0
    return float(sacrebleu.corpus_chrf(list(hypotheses), [list(references)]).score)


def sentence_bleu(hypothesis: str, reference: str, tokenize: str) -> float:
    """Smoothed sentence BLEU (0-100), for ranking single samples only."""
    import sacrebleu

    return float(sacrebleu.sentence_bleu(hypothesis, [reference], tokenize=tokenize).score)


def decode_ids(ids: Any, tokenizer: Any, direction: Direction | None = None) -> list[str]:
    """Decode generated ids or labels; -100 (ignored positions) becomes padding first.

    Without the replacement the fast tokenizers raise ``OverflowError`` on -100. The
    ``direction``'s language codes are dropped too (M2M100's tokenizer does not count its
    codes as special, so ``skip_special_tokens`` keeps them), and each text is read as
    the Translator reads it (:meth:`~workbench.core.languages.Direction.output_text`).
    """
    direction = direction or Direction()
    array = np.asarray(ids)
    array = np.where(array < 0, tokenizer.pad_token_id, array)
    rows = [direction.shown([int(i) for i in row]) for row in array]
    return [
        direction.output_text(t) for t in tokenizer.batch_decode(rows, skip_special_tokens=True)
    ]


def make_compute_metrics(
    tokenizer: Any,
    tokenize: str,
    references: Sequence[str] | None = None,
    direction: Direction | None = None,
    comet: Callable[[list[str]], float] | None = None,
) -> Callable[[Any], dict[str, float]]:
    """A ``compute_metrics`` for Seq2SeqTrainer: BLEU, chrF and the distinct-output ratio,
    and with ``comet`` (``--select-on comet``) the validation set's COMET of the outputs.

    Pass the raw ``references`` (in evaluation order) where available: decoding the
    tokenized labels loses characters the vocabulary maps to ``<unk>``, which would make
    per-epoch BLEU disagree with the before/after BLEU on the same set.
    """

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        predictions, labels = eval_pred.predictions, eval_pred.label_ids
        if isinstance(predictions, tuple):
            predictions = predictions[0]
        hyps = decode_ids(predictions, tokenizer, direction)
        if references is not None and len(references) == len(hyps):
            refs = list(references)
        else:
            refs = decode_ids(labels, tokenizer, direction)
        scores = {
            "bleu": round(corpus_bleu(hyps, refs, tokenize), 4),
            "chrf": round(corpus_chrf(hyps, refs), 4),
            "distinct": round(len(set(hyps)) / max(1, len(hyps)), 4),
        }
        if comet is not None:
            scores["comet"] = round(comet(hyps), 4)
        return scores

    return compute_metrics


def sentence_chrf(hypothesis: str, reference: str) -> float:
    """Sentence chrF (0-100): steadier than sentence BLEU on short sentences, so it is
    what ranks the sentences where two systems differ most."""
    import sacrebleu

    return float(sacrebleu.sentence_chrf(hypothesis, [reference]).score)
