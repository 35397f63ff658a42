"""What a pick costs: candidates, scoring, picks against beam search, full MBR against pruned.

Usage:
  python benchmarks/quality_decoding.py [--model translation_output/best_model]
      [--sentences 32] [--repeats 3] [--candidates 8] [--sizes 16 32 64] [--out FILE]
  python benchmarks/quality_decoding.py --quick      # 6 sentences, N = 4 and 8, seconds
                                                     # (the tests run it; report in a
                                                     # temporary folder)

One run, each figure over ``--repeats`` repetitions (median and spread), on the demo's
test sentences (``prepare_data(build_config("demo")).test``, English → Chinese) and a model:
``--model`` (a trained demo model, ``translation_output/best_model``), else an untrained
model of the demo's shape (``build_scratch_model``, the demo config) built in a temporary
folder. Every call is the workbench's own (``Translator``, ``generate_candidates``,
``Picker``), as ``translate --pick`` makes them, on one CPU thread.

1. Beam search: the model's own decoding over the sentences, per sentence.
2. Candidates: ``--candidates`` a sentence, sampled (epsilon 0.02 on a trained model; on
   the untrained one pure sampling, since its flat distribution leaves epsilon sampling
   one token to draw); candidates generated a second.
3. Picks among those candidates: MBR by chrF, by BLEU (``tokenize=zh``), and QE by the
   tiny CometKiwi fixture (``tests/fixtures/comet/unified-kiwi``, random weights of
   CometKiwi's shape at toy size: its time is not a real CometKiwi's); the scoring time a
   sentence, and a pick's whole time (candidates + scoring) as a multiple of beam search's.
4. Full MBR against pruned MBR (``--fast-mbr``), chrF utility, at N = ``--sizes`` on the
   model's real candidates: the share of sentences where both pick the same candidate,
   and the speed-up of the scoring.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from figures import BENCHMARKS, load_average, noise_summary, report_path, spread, spread_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

if TYPE_CHECKING:
    from workbench.core.picking.picks import Candidates, Pick, Picker

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
KIWI = BENCHMARKS.parent / "tests" / "fixtures" / "comet" / "unified-kiwi"
COMMITTED = BENCHMARKS / "QUALITY_DECODING.md"
#: A 1-minute load average at or above this on the 2-core machine: the figures are not quiet.
QUIET_BELOW = 2.5


def timed(call: Callable[[], Any], repeats: int) -> tuple[list[float], Any]:
    """``call``'s seconds at each repetition, and its last result."""
    seconds, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = call()
        seconds.append(time.perf_counter() - started)
    return seconds, result


def pick_all(picker: Picker, candidates: list[Candidates]) -> list[Pick]:
    """Each sentence's pick among its candidates."""
    return [picker.pick(c) for c in candidates]


def model_and_sentences(model: str | None, count: int, work: Path) -> tuple[str, list[str], bool]:
    """The model folder, the demo's first ``count`` test sources, and whether the model
    is trained (given) rather than built untrained here."""
    from workbench.core.config.build import build_config
    from workbench.core.data.prepared import prepare_data

    config = build_config("demo")
    data = prepare_data(config)
    sources = [p.source for p in data.test[:count]]
    if model is not None:
        return model, sources, True
    from workbench.core.model.scratch import build_scratch_model

    built, tokenizer = build_scratch_model(
        [p.source for p in data.train], [p.target for p in data.train], work / "spm", config
    )
    built.save_pretrained(work / "model")
    tokenizer.save_pretrained(work / "model")
    return str(work / "model"), sources, False


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Every figure of the report, each with its repetitions."""
    import torch

    from workbench.core.picking.metrics import chrf_metric
    from workbench.core.picking.picks import Picker
    from workbench.core.translate.candidates import CandidateSettings, generate_candidates
    from workbench.core.translate.picked import PickSettings
    from workbench.core.translate.translator import Translator

    torch.set_num_threads(1)
    model, sources, trained = model_and_sentences(args.model, args.sentences, work)
    translator = Translator.from_pretrained(model, backend="transformers")
    base = translator.default_options()
    translator.translate_many(sources[:4], base)  # lazy set-up is nobody's time
    n = len(sources)
    beam, _ = timed(lambda: translator.translate_many(sources, base), args.repeats)
    epsilon = None if trained else 0.0

    def settings(count: int) -> CandidateSettings:
        return CandidateSettings(count, epsilon=epsilon)

    drawn = settings(args.candidates)
    generation, candidates = timed(
        lambda: generate_candidates(translator, sources, drawn, base), args.repeats
    )
    picks = {
        "MBR chrF": PickSettings("mbr", utility="chrf", candidates=drawn),
        "MBR BLEU": PickSettings("mbr", utility="bleu", candidates=drawn),
        "QE (tiny CometKiwi)": PickSettings("qe", qe_model=str(KIWI), candidates=drawn),
    }
    scoring = {}
    for name, pick in picks.items():
        picker = pick.picker(translator)
        picker.pick(candidates[0])  # a neural metric's first call sets up its kernels
        scoring[name], _ = timed(partial(pick_all, picker, candidates), args.repeats)
    agreement = {}
    for size in args.sizes:
        pool = generate_candidates(translator, sources, settings(size), base)
        full, pruned = Picker("mbr", chrf_metric()), Picker("mbr", chrf_metric(), pruned=True)
        full_s, full_picks = timed(partial(pick_all, full, pool), args.repeats)
        pruned_s, pruned_picks = timed(partial(pick_all, pruned, pool), args.repeats)
        same = sum(
            a.translation == b.translation for a, b in zip(full_picks, pruned_picks, strict=True)
        )
        distinct = statistics.mean(len(c.texts) for c in pool)
        agreement[size] = (full_s, pruned_s, same, distinct)
    return {
        "model": model,
        "trained": trained,
        "sentences": n,
        "beam": beam,
        "beams": base.num_beams,
        "generation": generation,
        "distinct": statistics.mean(len(c.texts) for c in candidates),
        "scoring": scoring,
        "agreement": agreement,
    }


def report(args: argparse.Namespace, found: dict[str, Any], load: tuple[str, str]) -> str:
    """The report's markdown."""
    n, count = found["sentences"], args.candidates
    per = lambda seconds: [1000 * s / n for s in seconds]  # noqa: E731  ms a sentence
    beam_ms = statistics.median(per(found["beam"]))
    gen_ms = statistics.median(per(found["generation"]))
    rate = [count * n / s for s in found["generation"]]
    model = "a trained model" if found["trained"] else "an UNTRAINED model of the demo's shape"
    command = " ".join(["python benchmarks/quality_decoding.py", *args.argv])
    where = found["model"] if found["trained"] else "built in a temporary folder"
    lines = [
        "# What a pick costs",
        "",
        f"`{command}`: {found['sentences']} demo test "
        f"sentences (English → Chinese), {model} ({where}), {args.repeats} "
        f"repetitions a figure (median, then the spread: lowest–highest, (largest / "
        f"smallest − 1)), one CPU thread, {platform.processor() or platform.machine()}. "
        f"Load average (1/5/15 min) before {load[0]}, after {load[1]}.",
        "",
    ]
    minute = [float(x.split()[0]) if x[:1].isdigit() else QUIET_BELOW for x in load]
    if args.quick or max(minute) >= QUIET_BELOW:
        what = "a --quick run (toy sizes)" if args.quick else "a small run"
        lines += [
            f"**From {what} on a loaded, shared machine (1-minute load {minute[0]:.2f} "
            f"before, {minute[1]:.2f} after; quiet is below {QUIET_BELOW}): indicative, not "
            "results; rerun on a quiet machine.**",
            "",
        ]
    timings = {"beam search": found["beam"], "candidates": found["generation"]}
    timings |= {f"{name} scoring": s for name, s in found["scoring"].items()}
    for size, (full_s, pruned_s, _, _) in found["agreement"].items():
        timings |= {f"full MBR N={size}": full_s, f"pruned MBR N={size}": pruned_s}
    lines += [noise_summary({name: {"": spread(s)} for name, s in timings.items()}), ""]
    lines += [
        "## Candidates and picks against beam search",
        "",
        "| what | ms a sentence | spread | × beam search |",
        "| --- | --- | --- | --- |",
        f"| beam search ({found['beams']} beams) | {beam_ms:.1f} | "
        f"{spread_text(spread(per(found['beam'])), '.1f', ' ms')} | 1.0 |",
        f"| {count} candidates (sampled) | {gen_ms:.1f} | "
        f"{spread_text(spread(per(found['generation'])), '.1f', ' ms')} | {gen_ms / beam_ms:.1f} |",
    ]
    for name, seconds in found["scoring"].items():
        score_ms = statistics.median(per(seconds))
        lines.append(
            f"| pick by {name}: scoring only | {score_ms:.2f} | "
            f"{spread_text(spread(per(seconds)), '.2f', ' ms')} | {score_ms / beam_ms:.2f} |"
        )
        whole = gen_ms + score_ms
        lines.append(f"| pick by {name}: candidates + scoring | {whole:.1f} | | "
                     f"{whole / beam_ms:.1f} |")  # fmt: skip
    lines += [
        "",
        f"Candidates generated a second: {statistics.median(rate):.0f} "
        f"(spread {spread_text(spread(rate), '.0f')}); {found['distinct']:.1f} distinct of "
        f"{count} a sentence on average. Sampled "
        + (
            "with epsilon 0.02 (the workbench's default)."
            if found["trained"]
            else "purely (epsilon 0): an untrained model's flat distribution leaves "
            "epsilon sampling one token to draw, so its candidates would all be greedy's."
        ),
        "",
        "## Full MBR against pruned MBR (chrF utility, the same real candidates)",
        "",
        "| N | distinct a sentence | full: ms a sentence | pruned: ms a sentence | speed-up "
        "| same pick |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for size, (full_s, pruned_s, same, distinct) in found["agreement"].items():
        full_ms, pruned_ms = statistics.median(per(full_s)), statistics.median(per(pruned_s))
        full_spread = spread_text(spread(per(full_s)), ".1f")
        pruned_spread = spread_text(spread(per(pruned_s)), ".1f")
        lines.append(
            f"| {size} | {distinct:.1f} | {full_ms:.1f} ({full_spread}) "
            f"| {pruned_ms:.1f} ({pruned_spread}) "
            f"| {full_ms / pruned_ms:.1f}× | {same}/{n} |"
        )
    lines += [
        "",
        "Scoring only: the candidates are generated once for both. The speed-up is full "
        "MBR's median time over pruned MBR's; \"same pick\" counts the sentences where both "
        "pick the same text.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    """Measure, then write the report (``--quick``: into a temporary folder)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--sentences", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 32, 64])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    args.argv = sys.argv[1:]
    if args.quick:
        args.sentences, args.repeats, args.candidates, args.sizes = 6, 2, 4, [4, 8]
    out = report_path(args.out, COMMITTED, smoke=args.quick)
    before = load_average()
    with tempfile.TemporaryDirectory() as work:
        found = measure(args, Path(work))
    out.write_text(report(args, found, (before, load_average())), encoding="utf-8")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
