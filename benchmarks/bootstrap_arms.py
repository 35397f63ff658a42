"""What benchmarks/bootstrap_memory.py measures: the text it scores and each arm's call.

The text is synthetic but made of real sentences (:func:`make_systems`). Each arm is one
scoring call (:func:`run_arm`) whose numbers come back as plain JSON values, so that a
bounded arm's numbers can be compared bit for bit with those of the arm that holds every
resample. ``old_score_before_after`` scores over sacreBLEU's own ``PairedTest``, holding
every resample at once, for comparison only.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

#: Characters a perturbed sentence may take instead of its own: frequent in the HSK text.
FILLER = "的一是不了人我在有他这中大来上个们到说"


def make_systems(
    n: int, seed: int = 0, rates: tuple[float, ...] = (0.4, 0.12)
) -> tuple[list[str], ...]:
    """References and a system's output for each rate, ``n`` sentences each: by default
    ``(references, before, after)``, "before" a weak system (40% of its characters dropped
    or replaced) and "after" a better one (12%)."""
    from workbench.core.data.sources import load_hsk_pairs

    sentences = [p.target for p in load_hsk_pairs()]
    rng = random.Random(seed)
    rng.shuffle(sentences)
    references = [sentences[i % len(sentences)] for i in range(n)]

    def perturb(text: str, rate: float) -> str:
        out = []
        for ch in text:
            roll = rng.random()
            if roll < rate / 2:
                continue  # dropped
            out.append(rng.choice(FILLER) if roll < rate else ch)
        return "".join(out) or rng.choice(FILLER)

    return (references, *([perturb(r, rate) for r in references] for rate in rates))


def old_score_before_after(
    before: list[str], after: list[str], references: list[str], n_bootstrap: int
) -> dict[str, Any]:
    """``score_before_after``'s numbers over sacreBLEU's own resampling: its PairedTest,
    then the same draws once more for the interval of the change."""
    import numpy as np
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    from workbench.core.evaluate import significance as s

    refs = [references]
    test = PairedTest(
        [("before", before), ("after", after)],
        {"BLEU": BLEU(tokenize="zh"), "chrF": CHRF()},
        refs,
        test_type="bs",
        n_samples=n_bootstrap,
    )
    signatures, table = test()
    seed = test._seed if test._seed else None
    n = len(references)
    draws = np.random.default_rng(seed).choice(n, size=(n_bootstrap, n), replace=True)
    out: dict[str, Any] = {"size": n, "bleu_signature": str(signatures["BLEU"].format())}
    for key, metric in test.metrics.items():
        short = "bleu" if key == "BLEU" else "chrf"
        base, system = s._results(table, key)
        stats_before = np.array(metric._extract_corpus_statistics(before, refs), dtype="float32")
        stats_after = np.array(metric._extract_corpus_statistics(after, refs), dtype="float32")
        differences = [
            metric._compute_score_from_stats(stats_after[idx].sum(0)).score
            - metric._compute_score_from_stats(stats_before[idx].sum(0)).score
            for idx in draws
        ]
        out.update(
            {
                f"{short}_before": round(base.score, 2),
                f"{short}_after": round(system.score, 2),
                f"{short}_before_ci": s._interval(base),
                f"{short}_after_ci": s._interval(system),
                f"{short}_delta": round(system.score - base.score, 2) + 0.0,
                f"{short}_delta_ci": s.percentile_interval(differences),
                f"{short}_p": 1.0 if system.score == base.score else s._p_value(system),
            }
        )
    return out


def table_numbers(table: dict[str, list[Any]]) -> dict[str, list[list[float | None]]]:
    """A PairedTest-shaped table as plain numbers: [score, p, mean, ci] per system."""
    return {
        key: [[_plain(r.score), _plain(r.p_value), _plain(r.mean), _plain(r.ci)] for r in column]
        for key, column in table.items()
        if key != "System"
    }


def _plain(value: Any) -> float | None:
    # float() of a numpy float32 is exact: the JSON holds the very number sacreBLEU made.
    return None if value is None else float(value)


def score_numbers(score: Any) -> list[float]:
    """A corpus score with its interval: [score, bootstrap mean, 95% half-width]."""
    return [float(score.score), float(score._mean), float(score._ci)]


def run_arm(
    arm: str, references: list[str], before: list[str], after: list[str], n_bootstrap: int
) -> Any:
    """One arm's scoring call; its numbers, as JSON-ready values."""
    from sacrebleu.metrics import BLEU, CHRF

    def metrics() -> dict[str, Any]:
        return {"BLEU": BLEU(tokenize="zh"), "chrF": CHRF()}

    systems: list[tuple[str, Sequence[str]]] = [("before", before), ("after", after)]
    if arm == "sacrebleu":
        from sacrebleu.significance import PairedTest

        _, table = PairedTest(systems, metrics(), [references], "bs", n_bootstrap)()
        return table_numbers(table)
    if arm == "bounded":
        from workbench.core.evaluate.resampling import paired_bootstrap

        return table_numbers(paired_bootstrap(systems, metrics(), [references], n_bootstrap).table)
    if arm == "old workbench":
        return old_score_before_after(before, after, references, n_bootstrap)
    if arm == "workbench":
        from workbench.core.evaluate.significance import score_before_after

        scores = score_before_after(
            before, after, references, "zh", "test", "synthetic", n_bootstrap
        )
        found = scores.to_dict()
        # BLEU and chrF, the metrics the old arm scores (it has no chrF++ or TER)
        left_out = ("role", "name", "n_bootstrap", "chrfpp", "ter", "comet")
        return {k: v for k, v in found.items() if k not in left_out}
    if arm == "corpus_score":
        return [
            score_numbers(m.corpus_score(after, [references], n_bootstrap))
            for m in metrics().values()
        ]
    if arm == "bounded corpus_score":
        from workbench.core.evaluate.resampling import corpus_score_with_interval

        return [
            score_numbers(corpus_score_with_interval(m, after, [references], n_bootstrap))
            for m in metrics().values()
        ]
    raise ValueError(f"unknown arm {arm!r}")
