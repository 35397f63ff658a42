"""``workbench lab decoding|cache|attention``: measure the assignment's questions.

Thin: each study is a function in :mod:`workbench.core.lab`, imported inside its command,
so ``workbench --help`` stays light.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from workbench.cli.options import DEFAULT_MODEL_DIR, Flag, add_command, check_default_model
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.lab.attention_kinds import AttentionKinds
    from workbench.core.lab.cache import CacheStudy

MODEL: Flag = ("--model", {"default": DEFAULT_MODEL_DIR,
                           "help": f"saved model folder (default: {DEFAULT_MODEL_DIR})"})


def add_parser(subparsers: Any) -> None:
    """Register ``workbench lab`` and its studies on the CLI's subparsers."""
    lab = add_command(subparsers, "lab",
                      help="measure decoding strategies, the KV cache and the three attentions")
    studies = lab.add_subparsers(dest="study", metavar="STUDY")
    add_command(studies, "decoding", help="greedy, beam and sampling on the test set: BLEU, "
                "intervals, diversity, time", flags=(
                    MODEL,
                    ("--limit", {"type": int, "default": 200,
                                 "help": "the first N test sentences (default: 200)"}),
                    ("--run", {"metavar": "RUN_DIR", "default": None,
                               "help": "the run whose test set to use (default: the run "
                                       "that trained the model)"}),
                ))
    add_command(studies, "cache", help="the KV cache: time per token with and without it, "
                "and its size against the formula", flags=(
                    MODEL,
                    ("--lengths", {"type": int, "nargs": "+", "metavar": "T", "default": None,
                                   "help": "output lengths to force (default: 16 32 64 128)"}),
                    ("--repeats", {"type": int, "default": 3,
                                   "help": "timed runs per length; the median counts "
                                           "(default: 3)"}),
                ))
    add_command(studies, "attention", help="encoder self-, masked decoder self- and "
                "cross-attention of one sentence", flags=(
                    ("sentence", {"nargs": "*", "help": 'e.g. "I like to drink tea."'}),
                    MODEL,
                ))


def run(args: argparse.Namespace) -> int:
    """Run the chosen study and print what it measured."""
    if not args.study:
        raise WorkbenchError("say which study: workbench lab decoding, workbench lab cache "
                             "or workbench lab attention")
    check_default_model(args.model)
    return STUDIES[args.study](args)


def run_decoding(args: argparse.Namespace) -> int:
    """``workbench lab decoding``: the strategies on the run's test set, as a table, a
    chart of BLEU against time, one sentence under each, and what the figures show."""
    import sys
    from pathlib import Path

    from workbench.core.lab.decoding import decoding_study, findings, save_study
    from workbench.core.scores import format_p

    if args.limit < 1:
        raise WorkbenchError(f"--limit must be at least 1, got {args.limit}")

    def progress(name: str, done: int, total: int) -> None:
        print(f"  [{done}/{total}] {name}", file=sys.stderr, flush=True)

    study = decoding_study(args.model, Path(args.run) if args.run else None, args.limit,
                           on_progress=progress)
    print(f"decoding strategies on the first {study.size} sentences of the test set of "
          f"{study.run_dir} (BLEU tokenize={study.bleu_tokenize}; 95% intervals and p against "
          "greedy from sacreBLEU's paired bootstrap; sampled rows: mean of 3 seeds, the "
          "interval and p of seed 0)")
    header = (f"{'strategy':<16} {'BLEU':>6} {'95% CI':>13} {'p':>10} {'seeds ±':>7} "
              f"{'chrF':>6} {'distinct':>8} {'varies':>6} {'repeats':>7} {'len':>5} "
              f"{'ms/sent':>8}")
    print(header)
    print("-" * len(header))
    for r in study.results:
        ci = f"{r.bleu_ci[0]:.2f}–{r.bleu_ci[1]:.2f}"
        p = "baseline" if r is study.results[0] else format_p(r.bleu_p, 1000)
        spread, varies = (f"{r.spread:.2f}", f"{r.varies:.0%}") if r.sampled else ("-", "-")
        print(f"{r.name:<16} {r.bleu:>6.2f} {ci:>13} {p:>10} {spread:>7} {r.chrf:>6.2f} "
              f"{r.distinct:>8.0%} {varies:>6} {r.repeated:>7.0%} {r.length_ratio:>5.2f} "
              f"{r.ms_per_sentence:>8.1f}")
    print("distinct: different outputs over the set · varies: sentences whose output "
          "changes with the seed · repeats: outputs with a repeated 3-gram · len: length "
          "ratio to the references")
    print()
    print(_bleu_time_chart(study))
    print(f"\none sentence under every strategy\n  source:    {study.example_source}\n"
          f"  reference: {study.example_reference}")
    for r in study.results:
        for n, text in enumerate(r.example):
            label = r.name if n == 0 else ""
            print(f"  {label:<16} {text}")
    print()
    print(findings(study))
    saved = save_study(study)
    if saved:
        print(f"saved {saved}")
    return 0


def _bleu_time_chart(study: Any) -> str:
    """BLEU against milliseconds per sentence: each strategy a letter, keyed underneath
    (a legend box would cover the points in the corner it takes)."""
    import plotext as plt

    plt.clear_figure()
    plt.plot_size(72, 18)
    plt.theme("clear")
    letters = "abcdefghijklmnopqrstuvwxyz"
    for letter, r in zip(letters, study.results, strict=False):
        plt.scatter([r.ms_per_sentence], [r.bleu], marker=letter)
    plt.title("BLEU against time per sentence")
    plt.xlabel("ms per sentence")
    plt.ylabel("BLEU")
    key = "  ".join(f"{letter} {r.name}" for letter, r in zip(letters, study.results,
                                                               strict=False))
    return plt.uncolorize(str(plt.build())) + "\n" + key


def run_cache(args: argparse.Namespace) -> int:
    """``workbench lab cache``: the timings table, the formula against the cache, a chart."""
    import json

    from workbench.core.lab.cache import DEFAULT_LENGTHS, RESULT_FILE, cache_study, run_folder

    study = cache_study(args.model, lengths=args.lengths or DEFAULT_LENGTHS,
                        repeats=args.repeats)
    _print_cache_timings(study)
    _print_cache_sizes(study)
    print(_cache_chart(study))
    folder = run_folder(args.model)
    if folder is not None:
        target = folder / RESULT_FILE
        target.write_text(json.dumps(study.to_dict(), indent=2) + "\n", encoding="utf-8")
        print(f"saved {target}")
    return 0


def _print_cache_timings(study: CacheStudy) -> None:
    print(f"greedy decoding, batch 1, {len(study.sentences)} sentences, exactly t new tokens, "
          f"median of {study.repeats} runs")
    print(f"{'t':>5}  {'ms/token cached':>15}  {'uncached':>9}  {'speed-up':>8}  same ids")
    for row in study.timings:
        print(f"{row.new_tokens:>5}  {row.ms_cached:>15.2f}  {row.ms_uncached:>9.2f}  "
              f"{row.speedup:>7.2f}x  {'yes' if row.identical else 'NO'}")
    if not study.identical:
        print("warning: the cache changed the output ids at some t (see 'same ids')")


def _print_cache_sizes(study: CacheStudy) -> None:
    layers, d, s = study.layers, study.d_model, study.source_tokens
    print(f"\ncache size: L={layers} decoder layers, d={d} (= {study.heads} heads x "
          f"{study.head_dim}), S={s} source tokens of '{study.size_sentence}', {study.dtype}")
    print("t = positions the decoder was fed (start token + first t-1 outputs) after t new "
          "tokens;\nQ is not cached: only the newest position's query is ever used, while "
          "every step reads all past K and V")
    print(f"formula: self-attention 2*L*t*d = {2 * layers * d}*t floats, cross-attention "
          f"2*L*S*d = {2 * layers * s * d:,} floats")
    print(f"{'t':>5}  {'self formula':>12}  {'measured':>9}  {'cross formula':>13}  "
          f"{'measured':>9}  {'bytes':>9}")
    for size in study.sizes:
        print(f"{size.steps:>5}  {size.self_formula:>12,}  {size.self_measured:>9,}  "
              f"{size.cross_formula:>13,}  {size.cross_measured:>9,}  {size.total_bytes:>9,}")
    print("formula and measured cache agree at every t" if study.agrees else
          "formula and measured cache DISAGREE: see the rows above")


def _cache_chart(study: CacheStudy) -> str:
    import plotext

    plotext.clear_figure()
    plotext.plot_size(64, 14)
    ts = [row.new_tokens for row in study.timings]
    plotext.plot(ts, [row.ms_cached for row in study.timings], label="cached", marker="dot")
    plotext.plot(ts, [row.ms_uncached for row in study.timings], label="uncached",
                 marker="x")
    plotext.title("ms per token against t")
    plotext.xlabel("t (new tokens)")
    # Plain characters: the chart also goes to logs and pipes.
    return str(plotext.uncolorize(plotext.build()))


def run_attention(args: argparse.Namespace) -> int:
    """``workbench lab attention``: the three heatmaps, the per-head table, the JSON."""
    import json

    from rich.console import Console

    from workbench.core.attention import load_attention_model
    from workbench.core.decoding import clean_input
    from workbench.core.lab.attention_kinds import RESULT_FILE, attention_kinds
    from workbench.core.runs import run_dir_of
    from workbench.core.translation import read_settings

    sentence = clean_input(" ".join(args.sentence or []))
    if not sentence:
        raise WorkbenchError('empty sentence: give the text to look at, e.g. '
                             'workbench lab attention "I like to drink tea."')
    result = attention_kinds(load_attention_model(args.model), sentence)
    console = Console(highlight=False)
    _print_kinds(console, result)
    _print_heads(console, result)
    folder = run_dir_of(args.model, read_settings(args.model).get("run_dir"))
    if folder is not None:
        target = folder / RESULT_FILE
        try:
            target.write_text(json.dumps(result.to_dict(), ensure_ascii=False), encoding="utf-8")
        except OSError as err:
            raise WorkbenchError(f"cannot write {target}: {err.strerror or err}; check the "
                                 "run folder's permissions") from None
        print(f"saved {target}")
    return 0


def _print_kinds(console: Any, result: AttentionKinds) -> None:
    """The three heatmaps, each under its title and what its rows and columns are."""
    from rich.text import Text

    from workbench.core.heatmap import render_rich

    colour = console.color_system is not None and not console.no_color
    console.print(Text(f"source:      {result.sentence}"))
    console.print(Text(f"translation: {result.translation or '(empty)'}"))
    for kmap in result.kinds:
        view = kmap.view()
        console.print()
        console.print(Text(f"{kmap.kind} · {view.title}", style="bold"))
        grid = render_rich(view.row_labels, view.col_labels, view.matrix,
                           width=console.width, colour=colour,
                           axes=("[ ] the strongest column of each row", kmap.axes))
        console.print(grid, no_wrap=True, overflow="ignore", crop=False)


def _print_heads(console: Any, result: AttentionKinds) -> None:
    """The per-head table, then each kind's most focused and most spread head."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("kind", "layer", "head", "entropy", "ceiling", "agreement"):
        table.add_column(name, justify="left" if name == "kind" else "right")
    for row in result.heads:
        table.add_row(row.kind, str(row.layer + 1), str(row.head + 1),
                      f"{row.entropy_bits:.2f}", f"{row.uniform_bits:.2f}",
                      "-" if row.agreement is None else f"{row.agreement:.0%}")
    console.print()
    console.print(Text("per head", style="bold"))
    console.print(Text("entropy: mean over rows, in bits (0 = all on one token; ceiling = "
                       "spread evenly over what the row can see) · agreement: share of rows "
                       "whose strongest source token is the mean view's", style="dim"))
    console.print(table)
    for kmap in result.kinds:
        rows = [h for h in result.heads if h.kind == kmap.kind]
        focused = min(rows, key=lambda h: h.entropy_bits)
        spread = max(rows, key=lambda h: h.entropy_bits)
        line = (f"{kmap.kind}: most focused layer {focused.layer + 1} head {focused.head + 1} "
                f"({focused.entropy_bits:.2f} bits), most spread layer {spread.layer + 1} "
                f"head {spread.head + 1} ({spread.entropy_bits:.2f} bits)")
        if kmap is result.cross:
            best = max(rows, key=lambda h: h.agreement or 0.0)
            line += (f", closest to the mean view layer {best.layer + 1} head {best.head + 1} "
                     f"({best.agreement or 0.0:.0%})")
        console.print(Text(line))


STUDIES = {"decoding": run_decoding, "cache": run_cache, "attention": run_attention}
