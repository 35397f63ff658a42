"""Which metric may judge a pick: the one rule every place that shows a pick follows (the
run's lines, the report, compare).

A metric used to pick overrates what it picked, and so do its relatives (metric bias:
Kovacs, Deutsch & Freitag, WMT 2024). So the metric that picked is marked "(used to
pick)" wherever it is shown, its relatives are marked too, and neither leads the verdict.
The first judge is a neural metric of another family (COMET when MetricX picked, MetricX
when COMET or CometKiwi picked), with BLEU and chrF always beside it. Where the run has
no such judge (offline, the demo), that is said in one line, and a surface metric that
did not pick leads: chrF when BLEU picked, BLEU otherwise. The Kocmi et al. (2024)
reading is given on the judge that leads, never on the picker.

A metric's family is read from its name as tables show it (``PickingMetric.family`` for
the picker, :func:`family_of` for every metric a run scored), so the rule needs no more
than the names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The surface metrics that always stand beside the lead, in this order.
ALWAYS = ("BLEU", "chrF")
#: Surface metrics that share their counts: chrF++ is chrF with word bigrams.
KIN = {"chrF": "chrF++", "chrF++": "chrF"}


def family_of(metric: str) -> str:
    """``comet`` (COMET-22, CometKiwi, any COMET model), ``metricx`` (MetricX-24, its QE),
    or ``surface`` (BLEU, chrF, chrF++, TER)."""
    if metric.startswith("MetricX"):
        return "metricx"
    if metric.startswith(("COMET", "Comet")):
        return "comet"
    return "surface"


def relation(metric: str, picker: str, role: str = "pick") -> str | None:
    """How ``metric`` stands to the metric that picked: ``used to pick``, ``of the
    picker's family`` (a relative, which overrates the pick too), or None (independent).
    ``role`` ``rank``: the metric that ranked a run's training candidates (``used to
    rank``, ``of the ranker's family``), which overrates the tuned model the same way."""
    if metric == picker:
        return f"used to {role}"
    family = family_of(picker)
    if (family != "surface" and family_of(metric) == family) or KIN.get(picker) == metric:
        return f"of the {role}er's family"
    return None


def marked(metric: str, picker: str, role: str = "pick") -> str:
    """``chrF (used to pick)``, ``COMET-22 (of the picker's family)``, or ``BLEU``."""
    how = relation(metric, picker, role)
    return f"{metric} ({how})" if how else metric


@dataclass(frozen=True)
class Verdict:
    """The judges of one pick, the lead first, and what a reader must be told."""

    judges: tuple[str, ...]  # the lead, then BLEU and chrF where neither leads nor picked
    independent: bool  # a neural judge of another family leads
    note: str | None  # said when no independent neural judge is at hand

    @property
    def lead(self) -> str:
        """The metric the verdict is read on (and the Kocmi reading given on)."""
        return self.judges[0]


def verdict(picker: str, scored: Sequence[str], role: str = "pick") -> Verdict:
    """The judges of a pick made by ``picker`` among the metrics ``scored`` on both the
    beam and the picked translations, by the rule of the module docstring (``role``
    ``rank``: of a run trained on candidates ``picker`` ranked)."""
    family = family_of(picker)
    neural = [
        m for m in scored if family_of(m) not in ("surface", family) and relation(m, picker) is None
    ]
    if neural:
        lead, note = neural[0], None
    else:
        lead = "chrF" if picker == "BLEU" else "BLEU"
        wanted = "MetricX" if family == "comet" else "COMET"
        if family == "surface":
            wanted = "COMET or MetricX"
        note = (
            f"no independent neural judge at hand ({wanted} was not scored in this run): "
            f"{lead} leads, as a surface metric that did not {role}"
        )
    rest = tuple(m for m in ALWAYS if m not in (lead, picker) and m in scored)
    return Verdict((lead, *rest), bool(neural), note)
