"""Data a test plants: odd console lines, a score block with fixed numbers, the cleaned HSK
pairs, and a TSV file with known noise among clean pairs."""

from __future__ import annotations

import gzip
from pathlib import Path

#: Console lines that have broken translation consoles: each must give a row, not a crash.
ODD_INPUT = [
    "🍵 I like tea 🍵",  # emoji
    "a\x00b\x1bc\x07",  # control characters
    "bad \ud800 surrogate",  # a lone surrogate
    "我喜欢喝茶。",  # Chinese
    "[/bold] [red]not markup[/red]",  # looks like Rich markup
    "I like tea. " * 900,  # 10,800 characters, far over 512 positions
    "word " * 2000,  # one "sentence" over the limit: truncated
]


def scores_block(
    role: str,
    bleu: tuple[float, float],
    chrf: tuple[float, float],
    size: int = 425,
    name: str = "10% held out, seed 42",
) -> dict:
    """A summary.json score block with fixed numbers, for apps opened on a hand-made run."""
    return {
        "role": role,
        "name": name,
        "size": size,
        "bleu_before": bleu[0],
        "bleu_after": bleu[1],
        "chrf_before": chrf[0],
        "chrf_after": chrf[1],
        "bleu_before_ci": [0.0, bleu[0] + 0.1],
        "bleu_after_ci": [bleu[1] - 1.2, bleu[1] + 1.2],
        "chrf_before_ci": [0.0, chrf[0] + 0.2],
        "chrf_after_ci": [chrf[1] - 1.0, chrf[1] + 1.0],
        "bleu_delta": round(bleu[1] - bleu[0], 2),
        "bleu_delta_ci": [round(bleu[1] - bleu[0] - 1.3, 2), round(bleu[1] - bleu[0] + 1.3, 2)],
        "bleu_p": 0.000999,
        "chrf_delta": round(chrf[1] - chrf[0], 2),
        "chrf_delta_ci": [round(chrf[1] - chrf[0] - 1.1, 2), round(chrf[1] - chrf[0] + 1.1, 2)],
        "chrf_p": 0.000999,
        "n_bootstrap": 1000,
        "bleu_signature": "nrefs:1|bs:1000|tok:zh",
    }


def cleaned_hsk_pairs() -> list:
    """The HSK pairs as the demo cleans them, in the corpus's order."""
    from workbench.core.config.build import build_config
    from workbench.core.data.cleaning import CleaningSettings
    from workbench.core.data.cleaning_pass import clean_pairs
    from workbench.core.data.sources import load_hsk_pairs

    pairs, _ = clean_pairs(load_hsk_pairs(), CleaningSettings.of(build_config("demo")))
    return pairs


#: What write_planted_tsv plants among clean pairs, by the rule that should drop it.
PLANTED = {"copy": 10, "script": 8, "empty": 6, "ratio": 5, "duplicate": 7}


def write_planted_tsv(path: Path, clean: int = 300) -> Path:
    """``clean`` HSK pairs and, shuffled in, the noise of PLANTED: copied targets, English
    "Chinese" references, empty targets, one-word sources of whole paragraphs and pairs
    repeated."""
    import random

    pairs = cleaned_hsk_pairs()
    rows = [(p.source, p.target) for p in pairs[:clean]]
    extra = pairs[clean : clean + 100]
    planted = [(p.source, p.source) for p in extra[:10]]
    planted += [(p.source, "This reference is not Chinese at all.") for p in extra[10:18]]
    planted += [(p.source, "") for p in extra[18:24]]
    planted += [("Yes.", "".join(q.target for q in extra[24 + i : 30 + i])) for i in range(5)]
    planted += rows[:7]
    assert len(planted) == sum(PLANTED.values())
    mixed = rows + planted
    random.Random(1).shuffle(mixed)
    path.write_text("en\tzh\n" + "".join(f"{s}\t{t}\n" for s, t in mixed), encoding="utf-8")
    return path


def moses_files(prefix: Path, sources: list[str], targets: list[str], gz: bool = False) -> Path:
    """Line-aligned ``PREFIX.en`` and ``PREFIX.zh`` (``.gz`` when asked); returns PREFIX."""
    for lang, lines in (("en", sources), ("zh", targets)):
        data = "".join(f"{line}\n" for line in lines).encode("utf-8")
        name = f"{prefix}.{lang}" + (".gz" if gz else "")
        Path(name).write_bytes(gzip.compress(data) if gz else data)
    return prefix
