"""sacreBLEU's paired bootstrap and approximate randomisation: a set's before/after scores
with 95% intervals (:func:`score_before_after`), and several systems against a baseline
(:func:`score_systems`, :func:`randomisation_p`). Everything statistical is sacreBLEU's own;
the bootstrap's resampling is redone in bounded memory by :mod:`.resampling`, with
sacreBLEU's draws and numbers. See :mod:`workbench.core.records.scores` for why the interval of a
difference is read off the same resamples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.records.scores import N_BOOTSTRAP, N_PERMUTATIONS, SetScores

if TYPE_CHECKING:
    from sacrebleu.metrics.base import Score
    from sacrebleu.significance import Result


def _round(values: Sequence[float]) -> list[float]:
    # + 0.0 turns -0.0 into 0.0; scores live in [0, 100] even where mean - ci does not.
    return [round(min(100.0, max(-100.0, float(v))), 2) + 0.0 for v in values]


def _bounded(values: Sequence[float]) -> list[float]:
    """A single side's interval, clipped to the scale's [0, 100]."""
    return [min(100.0, max(0.0, v)) for v in _round(values)]


def _results(table: dict[str, list[str | Result]], key: str) -> list[Result]:
    """A metric's column of ``PairedTest``'s table: one ``Result`` per system (only the
    table's ``"System"`` column holds names)."""
    from sacrebleu.significance import Result

    column = table[key]
    results = [entry for entry in column if isinstance(entry, Result)]
    assert len(results) == len(column), f"{key}: PairedTest column holds names"
    return results


def _interval(result: Result) -> list[float]:
    """The bootstrap's 95% interval around a system's mean, clipped to [0, 100]."""
    # The paired bootstrap sets both for every system, the baseline included.
    assert result.mean is not None, "not a bootstrap result"
    assert result.ci is not None, "not a bootstrap result"
    return _bounded([result.mean - result.ci, result.mean + result.ci])


def _p_value(result: Result) -> float:
    """A compared system's p-value (the baseline, which has none, never gets here)."""
    assert result.p_value is not None, "the baseline has no p-value"
    return round(result.p_value, 6)


def _length_ratio(score: Score) -> float:
    """Hypothesis length / reference length, as BLEU's brevity penalty counts them."""
    from sacrebleu.metrics.bleu import BLEUScore

    assert isinstance(score, BLEUScore), "not a BLEU score"
    return round(score.sys_len / max(1, score.ref_len), 3)


def _percentiles(differences: Any) -> list[float]:
    """The 2.5th and 97.5th percentile, indexed as sacreBLEU's ``estimate_ci`` does."""
    import numpy as np

    ordered = np.sort(np.asarray(differences))
    low = len(ordered) // 40
    return _round([ordered[low], ordered[len(ordered) - low - 1]])


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
    from sacrebleu.metrics import BLEU, CHRF

    from workbench.core.evaluate.resampling import paired_bootstrap

    test = paired_bootstrap(
        [("before", before), ("after", after)],
        {"BLEU": BLEU(tokenize=tokenize), "chrF": CHRF()},
        [list(references)],
        n_bootstrap,
    )
    out: dict[str, Any] = {}
    for key in test.signatures:  # named by sacreBLEU: "BLEU", "chrF2"
        short = "bleu" if key == "BLEU" else "chrf"
        base, system = _results(test.table, key)
        out.update(
            {
                f"{short}_before": round(base.score, 2),
                f"{short}_after": round(system.score, 2),
                f"{short}_before_ci": _interval(base),
                f"{short}_after_ci": _interval(system),
                f"{short}_delta": round(system.score - base.score, 2) + 0.0,
                # The resamples the p-value was computed on, after minus before.
                f"{short}_delta_ci": _percentiles(test.differences[key][0]),
                # sacreBLEU gives a zero difference its smallest p ("a zero difference should
                # not be attributed to chance"); for a reader equal scores are no difference.
                f"{short}_p": 1.0 if system.score == base.score else _p_value(system),
            }
        )
    return SetScores(
        role=role,
        name=name,
        size=len(references),
        n_bootstrap=n_bootstrap,
        bleu_signature=str(test.signatures["BLEU"].format()),
        **out,
    )


@dataclass(frozen=True)
class SystemScore:
    """One system's corpus BLEU and chrF with sacreBLEU's 95% bootstrap intervals, and the
    paired p-value of its BLEU against the first system of the comparison."""

    bleu: float
    bleu_ci: list[float]
    chrf: float
    chrf_ci: list[float]
    bleu_p: float  # 1.0 for the baseline itself
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
            bleu_p=1.0
            if b.p_value is None or b.score == bleu_results[0].score
            else round(b.p_value, 6),
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
