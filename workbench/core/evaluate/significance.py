"""sacreBLEU's paired bootstrap and approximate randomisation: a set's before/after scores
with 95% intervals (:func:`score_before_after`), and several systems against a baseline
(:func:`score_systems`, :func:`randomisation_p`). Everything statistical is sacreBLEU's own;
the bootstrap's resampling is redone in bounded memory by :mod:`.resampling`, with
sacreBLEU's draws and numbers. See :mod:`workbench.core.records.scores` for why the interval of a
difference is read off the same resamples."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.records.scores import N_BOOTSTRAP, N_PERMUTATIONS, MetricChange, SetScores

if TYPE_CHECKING:
    from sacrebleu.metrics.base import Metric, Score
    from sacrebleu.significance import Result


#: sacreBLEU's metrics every set is scored with, in the order they are shown.
SACREBLEU_METRICS = ("BLEU", "chrF", "chrF++", "TER")
#: BLEU tokenizers for text without spaces between words: TER splits it into characters
#: too (sacreBLEU's ``asian_support``), or a Chinese sentence is one "word".
UNSPACED_TOKENIZERS = ("zh", "ja-mecab", "ko-mecab", "char")
#: The top of a scale that has none, so its intervals are never clipped above: TER (edits
#: can outnumber the reference's words many times over: a model that loops scores
#: thousands) and a neural metric's scores.
UNBOUNDED = math.inf


def sacrebleu_metrics(tokenize: str) -> dict[str, Metric]:
    """BLEU with ``tokenize``, chrF, chrF++ (chrF with word bigrams) and TER, as
    sacreBLEU's command line computes them (``-m bleu chrf ter``, ``--chrf-word-order 2``)."""
    from sacrebleu.metrics import BLEU, CHRF, TER

    return {
        "BLEU": BLEU(tokenize=tokenize),
        "chrF": CHRF(),
        "chrF++": CHRF(word_order=2),
        "TER": TER(asian_support=tokenize in UNSPACED_TOKENIZERS),
    }


def _round(values: Sequence[float], high: float = 100.0) -> list[float]:
    # + 0.0 turns -0.0 into 0.0; scores live in [0, 100] even where mean - ci does not.
    return [round(min(high, max(-high, float(v))), 2) + 0.0 for v in values]


def bounded(values: Sequence[float], high: float = 100.0) -> list[float]:
    """A single side's interval, clipped to the scale's [0, high] (TER can pass 100)."""
    return [min(high, max(0.0, v)) for v in _round(values, high)]


def _results(table: dict[str, list[str | Result]], key: str) -> list[Result]:
    """A metric's column of ``PairedTest``'s table: one ``Result`` per system (only the
    table's ``"System"`` column holds names)."""
    from sacrebleu.significance import Result

    column = table[key]
    results = [entry for entry in column if isinstance(entry, Result)]
    assert len(results) == len(column), f"{key}: PairedTest column holds names"
    return results


def _interval(result: Result, high: float = 100.0) -> list[float]:
    """The bootstrap's 95% interval around a system's mean, clipped to [0, high]."""
    # The paired bootstrap sets both for every system, the baseline included.
    assert result.mean is not None, "not a bootstrap result"
    assert result.ci is not None, "not a bootstrap result"
    return bounded([result.mean - result.ci, result.mean + result.ci], high)


def _p_value(result: Result) -> float:
    """A compared system's p-value (the baseline, which has none, never gets here)."""
    assert result.p_value is not None, "the baseline has no p-value"
    return round(result.p_value, 6)


def _paired_p(result: Result, baseline: Result) -> float:
    """A system's p-value against the baseline: 1.0 for the baseline itself and for a
    system that scores the same (the bootstrap's p of no difference)."""
    return 1.0 if result.p_value is None or result.score == baseline.score else _p_value(result)


def _length_ratio(score: Score) -> float:
    """Hypothesis length / reference length, as BLEU's brevity penalty counts them."""
    from sacrebleu.metrics.bleu import BLEUScore

    assert isinstance(score, BLEUScore), "not a BLEU score"
    return round(score.sys_len / max(1, score.ref_len), 3)


def percentile_interval(differences: Any, high: float = 100.0) -> list[float]:
    """The 2.5th and 97.5th percentile, indexed as sacreBLEU's ``estimate_ci`` does."""
    import numpy as np

    ordered = np.sort(np.asarray(differences))
    low = len(ordered) // 40
    return _round([ordered[low], ordered[len(ordered) - low - 1]], high)


@dataclass(frozen=True)
class PairedChanges:
    """sacreBLEU's metrics of one system against a baseline on one set."""

    changes: dict[str, MetricChange]  # by :data:`SACREBLEU_METRICS` name
    bleu_signature: str


def paired_changes(
    before: Sequence[str],
    after: Sequence[str],
    references: Sequence[str],
    tokenize: str,
    n_bootstrap: int = N_BOOTSTRAP,
) -> PairedChanges:
    """BLEU, chrF, chrF++ and TER of ``after`` against ``before`` (the baseline), each with
    sacreBLEU's paired bootstrap: both sides' intervals, the difference's interval read off
    the same resamples, and the p-value."""
    from workbench.core.evaluate.resampling import paired_bootstrap

    test = paired_bootstrap(
        [("before", before), ("after", after)],
        sacrebleu_metrics(tokenize),
        [list(references)],
        n_bootstrap,
    )
    changes = {}
    # The signatures are named by sacreBLEU ("BLEU", "chrF2", "chrF2++", "TER"), in order.
    for metric, key in zip(SACREBLEU_METRICS, test.signatures, strict=True):
        high = UNBOUNDED if metric == "TER" else 100.0
        base, system = _results(test.table, key)
        changes[metric] = MetricChange(
            metric=metric,
            before=round(base.score, 2),
            after=round(system.score, 2),
            before_ci=_interval(base, high),
            after_ci=_interval(system, high),
            delta=round(system.score - base.score, 2) + 0.0,
            # The resamples the p-value was computed on, after minus before.
            delta_ci=percentile_interval(test.differences[key][0], high),
            # sacreBLEU gives a zero difference its smallest p ("a zero difference should
            # not be attributed to chance"); for a reader equal scores are no difference.
            p=1.0 if system.score == base.score else _p_value(system),
            test="paired bootstrap",
            lower_is_better=metric == "TER",
        )
    return PairedChanges(changes, str(test.signatures["BLEU"].format()))


def score_before_after(
    before: Sequence[str],
    after: Sequence[str],
    references: Sequence[str],
    tokenize: str,
    role: str,
    name: str,
    n_bootstrap: int = N_BOOTSTRAP,
) -> SetScores:
    """Score both sides on one set with sacreBLEU's paired bootstrap (before = baseline)."""
    paired = paired_changes(before, after, references, tokenize, n_bootstrap)
    out: dict[str, Any] = {}
    for short, metric in (("bleu", "BLEU"), ("chrf", "chrF")):
        change = paired.changes[metric]
        out.update(
            {
                f"{short}_before": change.before,
                f"{short}_after": change.after,
                f"{short}_before_ci": change.before_ci,
                f"{short}_after_ci": change.after_ci,
                f"{short}_delta": change.delta,
                f"{short}_delta_ci": change.delta_ci,
                f"{short}_p": change.p,
            }
        )
    return SetScores(
        role=role,
        name=name,
        size=len(references),
        n_bootstrap=n_bootstrap,
        bleu_signature=paired.bleu_signature,
        chrfpp=paired.changes["chrF++"],
        ter=paired.changes["TER"],
        **out,
    )


@dataclass(frozen=True)
class SystemScore:
    """One system's corpus BLEU and chrF with sacreBLEU's 95% bootstrap intervals, and the
    paired p-values of its BLEU and its chrF against the first system of the comparison."""

    bleu: float
    bleu_ci: list[float]
    chrf: float
    chrf_ci: list[float]
    bleu_p: float  # 1.0 for the baseline itself
    chrf_p: float  # 1.0 for the baseline itself
    length_ratio: float  # hypothesis length / reference length, as BLEU counts it


def score_systems(
    systems: Sequence[tuple[str, Sequence[str]]],
    references: Sequence[str],
    tokenize: str,
    n_bootstrap: int = N_BOOTSTRAP,
) -> dict[str, SystemScore]:
    """Several systems on one set with sacreBLEU's paired bootstrap; the first is the
    baseline every p-value is against."""
    from sacrebleu.metrics import BLEU, CHRF

    from workbench.core.evaluate.resampling import paired_bootstrap

    test = paired_bootstrap(
        systems, {"BLEU": BLEU(tokenize=tokenize), "chrF": CHRF()}, [list(references)], n_bootstrap
    )
    bleu_key, chrf_key = test.signatures  # named by sacreBLEU: "BLEU", "chrF2"
    bleu_results, chrf_results = _results(test.table, bleu_key), _results(test.table, chrf_key)
    out = {}
    for (name, _), b, c, corpus in zip(
        systems, bleu_results, chrf_results, test.scores[bleu_key], strict=True
    ):
        out[name] = SystemScore(
            bleu=round(b.score, 2),
            bleu_ci=_interval(b),
            chrf=round(c.score, 2),
            chrf_ci=_interval(c),
            bleu_p=_paired_p(b, bleu_results[0]),
            chrf_p=_paired_p(c, chrf_results[0]),
            length_ratio=_length_ratio(corpus),
        )
    return out


def randomisation_p(
    baseline: Sequence[str],
    system: Sequence[str],
    references: Sequence[str],
    tokenize: str,
    n_permutations: int = N_PERMUTATIONS,
) -> dict[str, float]:
    """BLEU and chrF p-values of ``system`` against ``baseline`` by sacreBLEU's paired
    approximate randomisation (``sacrebleu --paired-ar``): the second test reviewers ask
    for next to the paired bootstrap. Equal scores are p = 1, as in the bootstrap here."""
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    test = PairedTest(
        [("baseline", list(baseline)), ("system", list(system))],
        {"BLEU": BLEU(tokenize=tokenize), "chrF": CHRF()},
        [list(references)],
        test_type="ar",
        n_samples=n_permutations,
    )
    _, table = test()
    out = {}
    for key, short in zip(test.metrics, ("bleu", "chrf"), strict=True):
        base, other = _results(table, key)
        out[short] = 1.0 if other.score == base.score else _p_value(other)
    return out
