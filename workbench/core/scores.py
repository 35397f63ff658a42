"""Before/after scores of one evaluation set, with sacreBLEU's intervals and paired test.

A "BLEU 0.02 -> 11.4" a user hands in must say which set it comes from and how much of
it could be chance. Everything statistical here is sacreBLEU's own: its paired bootstrap
(``sacrebleu.significance.PairedTest``, the code behind ``sacrebleu --paired-bs``) gives
each side's 95% interval and the p-value of "after differs from before". The interval of
the *difference* is read off the very same resamples (same seed, same sentence draws),
because PairedTest computes those paired differences but does not return them.

:func:`headline` and :func:`interval_line` are the one way every front end prints these
numbers (headless lines, the TUI, the report).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Bootstrap resamples for intervals and the paired test (sacreBLEU's default for -bs).
N_BOOTSTRAP = 1000
#: Shuffles for approximate randomisation (sacreBLEU's default for --paired-ar).
N_PERMUTATIONS = 10000
#: How every front end shows a value a run summary lacks: never as a number such as 0.00.
MISSING = "—"


@dataclass(frozen=True)
class SetScores:
    """BLEU and chrF before and after fine-tuning on one set, with 95% intervals.

    ``*_ci`` are ``[low, high]``: sacreBLEU's bootstrap mean ± its 95% half-width for a
    single side, the 2.5th and 97.5th percentile of the paired resampled differences for
    a delta. ``*_p`` is the paired bootstrap p-value of after vs before.
    """

    role: str  # "test" or "validation"
    name: str  # where the set comes from: "newstest2018", "10% held out, seed 42"
    size: int
    bleu_before: float
    bleu_after: float
    chrf_before: float
    chrf_after: float
    bleu_before_ci: list[float]
    bleu_after_ci: list[float]
    chrf_before_ci: list[float]
    chrf_after_ci: list[float]
    bleu_delta: float
    bleu_delta_ci: list[float]
    bleu_p: float
    chrf_delta: float
    chrf_delta_ci: list[float]
    chrf_p: float
    n_bootstrap: int
    #: sacreBLEU's signature of the BLEU computed, e.g. ``nrefs:1|bs:1000|seed:12345|...``.
    bleu_signature: str

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for summary.json."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> SetScores | None:
        """The scores stored in a summary block, or None (an older or a stopped run)."""
        names = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(data, dict) or not names <= set(data):
            return None
        return cls(**{k: data[k] for k in names})

    @property
    def label(self) -> str:
        """``test (newstest2018, 3,981)``: the set's role, origin and size."""
        return f"{self.role} ({self.name}, {self.size:,})"


def _round(values: Sequence[float]) -> list[float]:
    # + 0.0 turns -0.0 into 0.0; scores live in [0, 100] even where mean - ci does not.
    return [round(min(100.0, max(-100.0, float(v))), 2) + 0.0 for v in values]


def _bounded(values: Sequence[float]) -> list[float]:
    """A single side's interval, clipped to the scale's [0, 100]."""
    return [min(100.0, max(0.0, v)) for v in _round(values)]


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
    import numpy as np
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    refs = [list(references)]
    metrics = {"BLEU": BLEU(tokenize=tokenize), "chrF": CHRF()}
    test = PairedTest([("before", list(before)), ("after", list(after))], metrics, refs,
                      test_type="bs", n_samples=n_bootstrap)
    signatures, table = test()
    # PairedTest seeds a fresh generator per system with its seed (SACREBLEU_SEED,
    # default 12345) and draws the sentence indices first: the same draw here gives the
    # resamples its p-value was computed on.
    n = len(references)
    # As PairedTest seeds its test (a seed of 0 or SACREBLEU_SEED=none means unseeded, and
    # then these resamples are other ones than the p-value's).
    seed = test._seed if test._seed else None
    draws = np.random.default_rng(seed).choice(n, size=(n_bootstrap, n), replace=True)
    out: dict[str, Any] = {}
    for key, metric in test.metrics.items():
        short = "bleu" if key == "BLEU" else "chrf"
        base, system = table[key]
        stats_before = np.array(metric._extract_corpus_statistics(list(before), refs),
                                dtype="float32")
        stats_after = np.array(metric._extract_corpus_statistics(list(after), refs),
                               dtype="float32")
        differences = [
            metric._compute_score_from_stats(stats_after[idx].sum(0)).score
            - metric._compute_score_from_stats(stats_before[idx].sum(0)).score
            for idx in draws
        ]
        out.update({
            f"{short}_before": round(base.score, 2),
            f"{short}_after": round(system.score, 2),
            f"{short}_before_ci": _bounded([base.mean - base.ci, base.mean + base.ci]),
            f"{short}_after_ci": _bounded([system.mean - system.ci, system.mean + system.ci]),
            f"{short}_delta": round(system.score - base.score, 2) + 0.0,
            f"{short}_delta_ci": _percentiles(differences),
            # sacreBLEU gives a zero difference its smallest p ("a zero difference should
            # not be attributed to chance"); for a reader equal scores are no difference.
            f"{short}_p": 1.0 if system.score == base.score else round(system.p_value, 6),
        })
    return SetScores(role=role, name=name, size=n, n_bootstrap=n_bootstrap,
                     bleu_signature=str(signatures["BLEU"].format()), **out)


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


def score_systems(systems: Sequence[tuple[str, Sequence[str]]], references: Sequence[str],
                  tokenize: str, n_bootstrap: int = N_BOOTSTRAP) -> dict[str, SystemScore]:
    """Several systems on one set with sacreBLEU's paired bootstrap; the first is the
    baseline every p-value is against."""
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    refs = [list(references)]
    bleu = BLEU(tokenize=tokenize)
    test = PairedTest([(name, list(hyps)) for name, hyps in systems],
                      {"BLEU": bleu, "chrF": CHRF()}, refs, test_type="bs",
                      n_samples=n_bootstrap)
    _, table = test()
    bleu_key, chrf_key = test.metrics  # named by sacreBLEU: "BLEU", "chrF2"
    out = {}
    for (name, hyps), b, c in zip(systems, table[bleu_key], table[chrf_key], strict=True):
        plain = bleu.corpus_score(list(hyps), refs)
        out[name] = SystemScore(
            bleu=round(b.score, 2), bleu_ci=_bounded([b.mean - b.ci, b.mean + b.ci]),
            chrf=round(c.score, 2), chrf_ci=_bounded([c.mean - c.ci, c.mean + c.ci]),
            bleu_p=1.0 if b.p_value is None or b.score == table[bleu_key][0].score
            else round(b.p_value, 6),
            length_ratio=round(plain.sys_len / max(1, plain.ref_len), 3))
    return out


def randomisation_p(baseline: Sequence[str], system: Sequence[str],
                    references: Sequence[str], tokenize: str,
                    n_permutations: int = N_PERMUTATIONS) -> dict[str, float]:
    """BLEU and chrF p-values of ``system`` against ``baseline`` by sacreBLEU's paired
    approximate randomisation (``sacrebleu --paired-ar``): the second test reviewers ask
    for next to the paired bootstrap. Equal scores are p = 1, as in the bootstrap here."""
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    test = PairedTest([("baseline", list(baseline)), ("system", list(system))],
                      {"BLEU": BLEU(tokenize=tokenize), "chrF": CHRF()},
                      [list(references)], test_type="ar", n_samples=n_permutations)
    _, table = test()
    out = {}
    for key, short in zip(test.metrics, ("bleu", "chrf"), strict=True):
        base, other = table[key]
        out[short] = 1.0 if other.score == base.score else round(other.p_value, 6)
    return out


def format_p(p: float, n_bootstrap: int) -> str:
    """``p = 0.032``, or ``p < 0.001`` at the resolution of the test (its resample or
    shuffle count)."""
    # sacreBLEU's smallest p is 1 / (n + 1); the next is 2 / (n + 1). Halfway between
    # them survives the rounding of stored p-values (1/10001 is stored as 0.0001).
    floor = 1.5 / (n_bootstrap + 1)
    if p < floor:
        return f"p < {1 / n_bootstrap:.3g}"
    return f"p = {p:.3f}" if p >= 0.001 else f"p = {p:.1g}"


def delta_text(delta: float, ci: list[float]) -> str:
    """``+0.81, 95% CI +0.34…+1.33``: a change with its paired-bootstrap interval."""
    return f"{delta:+.2f}, 95% CI {ci[0]:+.2f}…{ci[1]:+.2f}"


def with_ci(score: float | None, ci: Sequence[float] | None) -> str:
    """``10.21 (8.66–11.80)``: a score with its 95% interval, or :data:`MISSING`."""
    if score is None or not ci:
        return MISSING
    return f"{score:.2f} ({ci[0]:.2f}–{ci[1]:.2f})"


def before_after(s: SetScores, metric: str) -> str:
    """``0.15 → 0.96 (+0.81, 95% CI +0.34…+1.33, p = 0.003)`` for ``bleu`` or ``chrf``:
    the one way every front end and the report write a before → after score."""
    return (f"{getattr(s, f'{metric}_before'):.2f} → {getattr(s, f'{metric}_after'):.2f} "
            f"({delta_text(getattr(s, f'{metric}_delta'), getattr(s, f'{metric}_delta_ci'))}, "
            f"{format_p(getattr(s, f'{metric}_p'), s.n_bootstrap)})")


def headline(s: SetScores) -> str:
    """``test (newstest2018, 3,981): BLEU 0.02 → 11.40 (+11.38, 95% CI …, p < 0.001) ·
    chrF …``: the line users hand in."""
    return f"{s.label}: BLEU {before_after(s, 'bleu')} · chrF {before_after(s, 'chrf')}"


def interval_line(s: SetScores) -> str:
    """Each side's own 95% bootstrap interval, for the line under the headline."""
    def span(ci: list[float]) -> str:
        return f"{ci[0]:.2f}…{ci[1]:.2f}"

    return (f"95% CI before: BLEU {span(s.bleu_before_ci)}, chrF {span(s.chrf_before_ci)}; "
            f"after: BLEU {span(s.bleu_after_ci)}, chrF {span(s.chrf_after_ci)} "
            f"(sacreBLEU paired bootstrap, {s.n_bootstrap} resamples)")


def finite_or_none(value: Any) -> float | None:
    """A float when ``value`` is a finite number, else None (keeps NaN out of JSON/plots)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def number(value: float | None, digits: int = 2) -> str:
    """A score with fixed decimals, or :data:`MISSING` when the summary lacks it."""
    return MISSING if value is None else f"{value:.{digits}f}"
