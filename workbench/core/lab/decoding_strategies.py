"""Decoding strategies measured: why translation searches and chat models sample (Q13d).

The run's test set (never used to choose anything) is translated with greedy search,
beam search (k = 2, 4, 8) and sampling (top-k 10, top-p 0.9, and pure sampling at three
temperatures, three seeds each), all through the one :class:`Translator` the console
uses. Each strategy gets BLEU and chrF with sacreBLEU's 95% bootstrap intervals and a
paired p-value against greedy, its spread across seeds, how many outputs are distinct,
how many repeat an n-gram, the length ratio to the references and the time per sentence.
The paragraph under the table is written from these figures, not fixed in advance.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from workbench.core.decoding import DecodeOptions
from workbench.errors import WorkbenchError

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


def held_out_pairs(run_dir: Path, limit: int) -> list[tuple[str, str]]:
    """The first ``limit`` (source, reference) pairs of a run's test set, in its order."""
    from workbench.core.run_folder.layout import RunFolder
    from workbench.core.run_folder.samples import read_translations

    path = RunFolder(run_dir).translations("test")
    pairs = [(r.source, r.reference) for r in read_translations(run_dir, "test")[0]]
    if not pairs:  # missing, unreadable or empty
        raise WorkbenchError(
            f"no test sentences in {path}; pass --run with a finished run "
            "folder (workbench train writes them)"
        )
    return pairs[:limit]


def repeats_itself(text: str, n: int = REPEAT_N) -> bool:
    """Whether one n-gram occurs twice: of characters for text with wide (CJK) characters
    in it, else words. The unit is read from the text itself, not from its language, so
    Korean (wide) counts in characters here and Thai in words."""
    from workbench.core.languages import length_units
    from workbench.core.views.wide import has_cjk

    units = length_units(text, "characters" if has_cjk(text) else "words")
    grams = [tuple(units[i : i + n]) for i in range(len(units) - n + 1)]
    return len(grams) != len(set(grams))


def decoding_study(
    model_dir: str,
    run_dir: Path | None = None,
    limit: int = 200,
    strategies: Sequence[Strategy] = STRATEGIES,
    on_progress: Callable[[str, int, int], None] | None = None,
    stop: threading.Event | None = None,
) -> DecodingStudy:
    """Translate the test set with every strategy and score each; see the module doc.

    ``on_progress(name, done, total)`` is called before each decode; setting ``stop``
    ends the study between two decodes (WorkbenchError).
    """
    if limit < 1:  # checked here, for the command and the Lab pane alike
        raise WorkbenchError(
            f"the sentence limit must be at least 1, got {limit}; 200 is the default"
        )
    import torch

    from workbench.core.evaluate.significance import score_systems
    from workbench.core.translate.loading import settings_for
    from workbench.core.translate.translator import Translator

    settings = settings_for(model_dir)
    if run_dir is None:
        from workbench.core.run_folder.output_folder import run_dir_of

        run_dir = run_dir_of(model_dir, settings.run_dir)
        if run_dir is None:
            raise WorkbenchError(
                f"the run that trained {model_dir} is not known or not there "
                "any more; pass --run RUN_DIR to choose the test set"
            )
    pairs = held_out_pairs(Path(run_dir), limit)
    sources = [s for s, _ in pairs]
    references = [r for _, r in pairs]
    tokenize = settings.bleu_tokenize or "13a"
    translator = Translator.from_pretrained(model_dir, backend="transformers")
    base = translator.default_options()
    # The first decode pays for lazy set-up (kernels, thread pools): not greedy's time.
    translator.translate_many(sources[:8], base)
    outputs: dict[tuple[str, int], list[str]] = {}
    seconds: dict[str, float] = {}
    total = sum(len(s.seeds) for s in strategies)
    for strategy in strategies:
        options = strategy.options(base)
        spent = 0.0
        for seed in strategy.seeds:
            if stop is not None and stop.is_set():
                raise WorkbenchError("the decoding study was stopped before it finished")
            if on_progress:
                on_progress(strategy.name, len(outputs), total)
            torch.manual_seed(seed)
            started = time.perf_counter()
            outputs[(strategy.name, seed)] = translator.translate_many(sources, options)
            spent += time.perf_counter() - started
        seconds[strategy.name] = spent / len(strategy.seeds)
    if on_progress:
        on_progress("scoring", total, total)
    systems = [(f"{name} #{seed}", hyps) for (name, seed), hyps in outputs.items()]
    scores = score_systems(systems, references, tokenize)
    study = DecodingStudy(
        model=model_dir,
        run_dir=str(run_dir),
        size=len(pairs),
        bleu_tokenize=tokenize,
        example_source=sources[0],
        example_reference=references[0],
    )
    for strategy in strategies:
        runs = [outputs[(strategy.name, seed)] for seed in strategy.seeds]
        first = scores[f"{strategy.name} #{strategy.seeds[0]}"]
        every = [scores[f"{strategy.name} #{seed}"] for seed in strategy.seeds]
        hyps = runs[0]
        study.results.append(
            StrategyResult(
                name=strategy.name,
                sampled=strategy.do_sample,
                bleu=round(sum(s.bleu for s in every) / len(every), 2),
                bleu_ci=first.bleu_ci,
                chrf=round(sum(s.chrf for s in every) / len(every), 2),
                chrf_ci=first.chrf_ci,
                bleu_p=first.bleu_p,
                bleu_seeds=[s.bleu for s in every],
                distinct=round(len(set(hyps)) / len(hyps), 3),
                varies=round(
                    sum(len(set(outs)) > 1 for outs in zip(*runs, strict=True)) / len(hyps), 3
                ),
                repeated=round(sum(map(repeats_itself, hyps)) / len(hyps), 3),
                length_ratio=first.length_ratio,
                ms_per_sentence=round(1000 * seconds[strategy.name] / len(hyps), 2),
                example=[run[0] for run in runs],
            )
        )
    return study


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
    return " ".join(parts)
