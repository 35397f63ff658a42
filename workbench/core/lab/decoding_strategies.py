"""Decoding strategies measured: why translation searches and chat models sample (Q13d).

The run's test set (never used to choose anything) is translated with greedy search,
beam search (k = 2, 4, 8) and sampling (top-k 10, top-p 0.9, and pure sampling at three
temperatures, three seeds each), all through the one :class:`Translator` the console
uses, and by the quality-aware arms (:mod:`.picked_arms`: N candidates, one picked by
MBR or QE). Each strategy gets BLEU and chrF with sacreBLEU's 95% bootstrap intervals and
a paired p-value against greedy, its spread across seeds, how many outputs are distinct,
how many repeat an n-gram, the length ratio to the references and the time per sentence.
The paragraph under the table is written from these figures, not fixed in advance. This
module holds the records and their reading; :mod:`.decoding_run` runs the study.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from workbench.core.decoding import DecodeOptions
from workbench.core.lab.picked_arms import PickResult, pick_findings

#: The seeds every sampled strategy runs with: a sampled score is a draw, not a value.
SEEDS = (0, 1, 2)
#: An output "repeats itself" when one n-gram of this many units occurs twice in it.
REPEAT_N = 3


@dataclass(frozen=True)
class Strategy:
    """A way to generate: its name, its options over the model's own, and whether it samples."""

    name: str
    num_beams: int = 1
    do_sample: bool = False
    top_k: int = 0
    top_p: float = 1.0
    temperature: float = 1.0

    def options(self, base: DecodeOptions) -> DecodeOptions:
        """The model's own options (length, n-gram blocking) with this strategy's choice."""
        return dataclasses.replace(
            base,
            num_beams=self.num_beams,
            do_sample=self.do_sample,
            top_k=self.top_k,
            top_p=self.top_p,
            temperature=self.temperature,
        )

    @property
    def seeds(self) -> tuple[int, ...]:
        """Search is deterministic and runs once; sampling runs once per seed."""
        return SEEDS if self.do_sample else (SEEDS[0],)


#: The strategies of the assignment's question, greedy first (the baseline of the p-values).
STRATEGIES = (
    Strategy("greedy"),
    Strategy("beam 2", num_beams=2),
    Strategy("beam 4", num_beams=4),
    Strategy("beam 8", num_beams=8),
    Strategy("top-k 10", do_sample=True, top_k=10),
    Strategy("top-p 0.9", do_sample=True, top_p=0.9),
    Strategy("temperature 0.7", do_sample=True, temperature=0.7),
    Strategy("temperature 1.0", do_sample=True, temperature=1.0),
    Strategy("temperature 1.3", do_sample=True, temperature=1.3),
)


@dataclass
class StrategyResult:
    """What one strategy did on the set (sampled ones: the first seed's interval and p,
    the mean and spread of BLEU over the seeds)."""

    name: str
    sampled: bool
    bleu: float
    bleu_ci: list[float]
    chrf: float
    chrf_ci: list[float]
    bleu_p: float
    bleu_seeds: list[float]
    distinct: float  # share of distinct outputs over the set
    varies: float  # share of sentences whose output changes from one seed to another
    repeated: float  # share of outputs with a repeated n-gram
    length_ratio: float
    ms_per_sentence: float
    example: list[str]  # the example sentence's output (one per seed when sampled)

    #: Written beside the fields for the file to read alone, derived again when read.
    WRITTEN_ONLY: ClassVar[tuple[str, ...]] = ("spread",)

    @property
    def spread(self) -> float:
        """BLEU's range over the seeds (0 for search)."""
        return round(max(self.bleu_seeds) - min(self.bleu_seeds), 2)


@dataclass
class DecodingStudy:
    """The study of one model on the first ``size`` sentences of a run's test set."""

    model: str
    run_dir: str
    size: int
    bleu_tokenize: str
    example_source: str
    example_reference: str
    results: list[StrategyResult] = field(default_factory=list)
    #: The quality-aware arms, each with its cost (none: the study was run without).
    picks: list[PickResult] = field(default_factory=list)

    #: Written for the file to read alone (:func:`findings`), derived again when read.
    WRITTEN_ONLY: ClassVar[tuple[str, ...]] = ("findings",)

    def to_dict(self) -> dict[str, Any]:
        """JSON for ``lab_decoding.json`` (the report reads it back with
        :func:`~workbench.core.records.typed.decode`)."""
        data = dataclasses.asdict(self)
        for row, result in zip(data["results"], self.results, strict=True):
            row["spread"] = result.spread
        data["findings"] = findings(self)
        return data


def repeats_itself(text: str, n: int = REPEAT_N) -> bool:
    """Whether one n-gram occurs twice: of characters for text with wide (CJK) characters
    in it, else words. The unit is read from the text itself, not from its language, so
    Korean (wide) counts in characters here and Thai in words."""
    from workbench.core.languages import length_units
    from workbench.core.views.wide import has_cjk

    units = length_units(text, "characters" if has_cjk(text) else "words")
    grams = [tuple(units[i : i + n]) for i in range(len(units) - n + 1)]
    return len(grams) != len(set(grams))


def findings(study: DecodingStudy) -> str:
    """A short paragraph on what the figures show, written from them (ranks, not prose
    fixed in advance)."""
    results = study.results
    if not results:
        return ""
    best = max(results, key=lambda r: r.bleu)
    searched = [r for r in results if not r.sampled]
    sampled = [r for r in results if r.sampled]
    greedy = results[0]
    parts = [
        f"On these {study.size} test sentences the highest BLEU is {best.name}'s ({best.bleu:.2f})."
    ]
    if searched and sampled:
        best_search = max(searched, key=lambda r: r.bleu)
        best_sample = max(sampled, key=lambda r: r.bleu)
        gap = best_search.bleu - best_sample.bleu
        parts.append(
            f"The best search ({best_search.name}, {best_search.bleu:.2f}) is "
            f"{abs(gap):.2f} BLEU {'above' if gap >= 0 else 'below'} the best sampling "
            f"({best_sample.name}, {best_sample.bleu:.2f}); sampled scores move by up to "
            f"{max(r.spread for r in sampled):.2f} BLEU between seeds."
        )
        steady = min(sampled, key=lambda r: r.varies)
        parts.append(
            f"Sampling buys variety: even {steady.name} gives another output for "
            f"{steady.varies:.0%} of the sentences when only the seed changes, while search "
            "gives the same sentence every time. That is what a chat model wants and what "
            "a translation, which should be the one most likely sentence, does not."
        )
    beams = [r for r in searched if r.name.startswith("beam")]
    if beams:
        slowest = max(beams, key=lambda r: r.ms_per_sentence)
        parts.append(
            f"{slowest.name} costs {slowest.ms_per_sentence:.1f} ms a sentence "
            f"against greedy's {greedy.ms_per_sentence:.1f}."
        )
    looping = max(results, key=lambda r: r.repeated)
    if looping.repeated > 0:
        parts.append(
            f"{looping.name} repeats an n-gram in {looping.repeated:.0%} of its "
            "outputs, the most of all."
        )
    if study.picks:
        parts.append(pick_findings(study.picks, greedy.bleu))
    return " ".join(parts)
