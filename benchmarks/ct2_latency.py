"""CTranslate2 vs transformers: console latency, validation BLEU, and an opus-mt-sized model.

Usage:
  python benchmarks/ct2_latency.py --model translation_output/best_model [--runs 30]
      [--threads N] [--bleu] [--opus-shape] [--json out.json]
  python benchmarks/ct2_latency.py --model <a saved model> --smoke   # every arm, seconds

Arms (each a real :class:`Translator`, as ``workbench interact`` builds it):
  transformers       the saved model, ``model.generate``
  ct2 int8           ``<model>/ct2-int8``    (made here with export_ctranslate2 if missing)
  ct2 float32        ``<model>/ct2-float32``

Latency: the console's own measure (``Translator.translate``: clean, tokenize, generate,
decode) of one 10-word sentence with the model's default decoding (the console's: beams,
n-gram block and length from the generation config); 5 warm-up calls per arm, then
``--runs`` rounds, the arms in a new random order each round, so load from other jobs on
the machine falls on all arms alike, with a short pause between calls (``--gap``, as
between typed lines; it also lets one engine's idle OpenMP threads stop spinning before
the other runs). Medians and the ratio to transformers are reported. Both engines use the
same number of CPU threads: ``--threads`` (default torch.get_num_threads()).

--bleu: corpus BLEU (sacreBLEU, the model's tokenizer setting, zh for the demo) on the demo
run's held-out split (``prepare_data(build_config("demo"))``: the same 425 pairs), same
decoding for every arm, batches of 128 as the training run's after-BLEU.

--opus-shape: latency only, of a random-weight model shaped like opus-mt-en-zh (d_model
512, 6+6 layers, 8 heads, FFN 2048, vocabulary 65,001 with <pad> last): 14 source tokens,
exactly 16 output tokens (min = max length, since random weights never stop), 4 beams.
Token ids are fed directly (the demo tokenizer does not fit that vocabulary).

--smoke: every part at toy size, for the test suite (so that a broken benchmark shows in
CI): 2 rounds, no pause, BLEU on 20 pairs, the opus-shaped model 16 wide with one layer a
side; the JSON goes to a temporary folder unless --json says. The exports it makes go
into the model's folder, as in a measuring run.

The opus-shaped model and its arm are ``ct2_opus_shape.py``; the interleaved timing and
its medians, ``interleaved_arms.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from ct2_opus_shape import OPUS_SHAPE, opus_shape_latency
from figures import figure, report_path
from interleaved_arms import interleaved, summarize
from speed_bench.modes import TINY_SHAPE  # --smoke's opus-shaped model: 16 wide, 1 layer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
SENTENCE = "My friends and I like to drink green tea together."  # 10 words
ARMS = ("transformers", "ct2 int8", "ct2 float32")
SMOKE_PAIRS = 20  # --smoke's BLEU pairs


def load_arms(model: str) -> dict[str, Any]:
    """One Translator per arm; the CTranslate2 exports are made (or reused) here."""
    from workbench.core.translate.ct2_export import export_ctranslate2
    from workbench.core.translate.translator import Translator

    translators = {
        "transformers": Translator.from_pretrained(model, device="cpu", backend="transformers")
    }
    for quantization in ("int8", "float32"):
        export = export_ctranslate2(model, quantization)  # reused when up to date
        translators[f"ct2 {quantization}"] = Translator.from_pretrained(
            str(export.path), device="cpu", backend="ct2"
        )
    return translators


def console_latency(
    translators: dict[str, Any], runs: int, gap: float, warmup: int = 5
) -> dict[str, Any]:
    """The console's latency on SENTENCE, each arm, interleaved; what each arm answered."""
    options = translators["transformers"].default_options()
    outputs = {name: t.translate(SENTENCE, options).text for name, t in translators.items()}
    calls = {name: (lambda t=t: t.translate(SENTENCE, options)) for name, t in translators.items()}
    return {
        "sentence": SENTENCE,
        "options": vars(options),
        "outputs": outputs,
        "rows": summarize(interleaved(calls, runs, warmup, gap), "transformers"),
    }


def validation_bleu(
    translators: dict[str, Any], model: str, pairs: int | None = None
) -> dict[str, Any]:
    """Corpus BLEU of each arm on the first ``pairs`` demo validation pairs (all: None)."""
    from workbench.core.config.build import build_config
    from workbench.core.data.prepared import prepare_data
    from workbench.core.evaluate.metrics import corpus_bleu
    from workbench.core.translate.loading import settings_for

    config = build_config("demo")
    validation = prepare_data(config).validation[:pairs]
    sources = [p.source for p in validation]
    references = [p.target for p in validation]
    tokenize = settings_for(model).bleu_tokenize or config.bleu_tokenize
    options = translators["transformers"].default_options()
    rows: list[dict[str, Any]] = []
    hypotheses: dict[str, list[str]] = {}
    for name, translator in translators.items():
        started = time.perf_counter()
        hypotheses[name] = translator.translate_many(sources, options, config.eval_batch_size)
        seconds = time.perf_counter() - started
        rows.append(
            {
                "arm": name,
                "bleu": round(corpus_bleu(hypotheses[name], references, tokenize), 2),
                "seconds": round(seconds, 1),
            }
        )
    reference = hypotheses["transformers"]
    for row in rows:
        same = sum(a == b for a, b in zip(hypotheses[row["arm"]], reference, strict=True))
        row["identical_to_transformers"] = f"{same}/{len(reference)}"
    return {
        "pairs": len(sources),
        "tokenize": tokenize,
        "options": vars(options),
        "batch_size": config.eval_batch_size,
        "rows": rows,
    }


def environment() -> dict[str, Any]:
    """Versions, threads and load, for the JSON."""
    import ctranslate2
    import torch
    import transformers

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "ctranslate2": ctranslate2.__version__,
        "threads": torch.get_num_threads(),
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
    }


def table(rows: list[dict[str, Any]]) -> str:
    """Rows as a markdown table; a figure not measured prints as "n/a"."""
    if not rows:
        return figure(None)
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + " --- |" * len(keys)]
    lines += ["| " + " | ".join(figure(r.get(k)) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def main() -> int:
    """Measure what the flags ask for, print the tables, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="translation_output/best_model")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument(
        "--threads", type=int, default=None, help="CPU threads for both engines (default: torch's)"
    )
    parser.add_argument("--gap", type=float, default=0.2, help="seconds between calls")
    parser.add_argument("--bleu", action="store_true")
    parser.add_argument("--opus-shape", action="store_true")
    parser.add_argument("--skip-demo-latency", action="store_true")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="every part at toy size (2 rounds, BLEU on 20 pairs, a tiny opus-shaped model); "
        "the JSON goes to a temporary folder unless --json says",
    )
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.gap, args.bleu, args.opus_shape = 2, 0.0, True, True
    warmup = 1 if args.smoke else 5
    os.environ.setdefault("CT2_BENCH_SPM", args.model)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)  # the CT2 backend takes torch's count

    report: dict[str, Any] = {"command": " ".join(sys.argv), "environment": environment()}
    translators = load_arms(args.model)
    if not args.skip_demo_latency:
        report["console_latency"] = console_latency(translators, args.runs, args.gap, warmup)
        print("console latency,", SENTENCE, report["console_latency"]["options"])
        print(table(report["console_latency"]["rows"]))
        for name, text in report["console_latency"]["outputs"].items():
            print(f"  {name}: {text}")
    if args.bleu:
        pairs = SMOKE_PAIRS if args.smoke else None
        report["validation_bleu"] = validation_bleu(translators, args.model, pairs)
        print(f"validation BLEU ({report['validation_bleu']['pairs']} pairs)")
        print(table(report["validation_bleu"]["rows"]))
    if args.opus_shape:
        shape = TINY_SHAPE if args.smoke else OPUS_SHAPE
        report["opus_shape_latency"] = opus_shape_latency(
            args.runs, args.gap, shape, warmup=1 if args.smoke else 3
        )
        print(
            f"opus-mt-shaped random model "
            f"({report['opus_shape_latency']['parameters'] / 1e6:.1f}M parameters)"
        )
        print(table(report["opus_shape_latency"]["rows"]))
    report["environment"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.json or args.smoke:
        out = report_path(args.json, Path(__file__).with_name("ct2_latency.json"), args.smoke)
        out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
