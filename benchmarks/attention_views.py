"""Which cross-attention view aligns best on a trained demo model (evidence for the default).

Usage: python benchmarks/attention_views.py translation_output/best_model [--pairs N]

For each held-out demo pair, teacher-forced on the reference, every target word that
contains the lexicon translation of exactly one source word is a case; a view scores a
hit when that row's strongest source word is the lexicon word. Chance is 1 / number of
source words, averaged over the cases. ``--pairs`` keeps the first N held-out pairs (the
test suite runs 20 on its tiny model, so that a broken benchmark shows in CI); with no
case at all, the rates print as "n/a".
"""

from __future__ import annotations

import argparse
import re

import numpy as np
from figures import figure, ratio

from workbench.core.attention.extract import forward_attention
from workbench.core.attention.grid import AttentionMap
from workbench.core.config.build import build_config
from workbench.core.data.prepared import prepare_data
from workbench.core.model.load import load_model_and_tokenizer

LEXICON = {
    "i": "我",
    "you": "你",
    "he": "他",
    "she": "她",
    "tea": "茶",
    "water": "水",
    "cat": "猫",
    "dog": "狗",
    "book": "书",
    "school": "学校",
    "teacher": "老师",
    "student": "学生",
    "today": "今天",
    "tomorrow": "明天",
    "yesterday": "昨天",
    "like": "喜欢",
    "eat": "吃",
    "drink": "喝",
    "china": "中国",
    "money": "钱",
    "home": "家",
    "mother": "妈妈",
    "father": "爸爸",
    "friend": "朋友",
    "doctor": "医生",
    "hospital": "医院",
    "weather": "天气",
    "work": "工作",
    "movie": "电影",
    "buy": "买",
    "go": "去",
    "cold": "冷",
    "hot": "热",
    "rain": "雨",
    "phone": "电话",
    "time": "时间",
    "car": "车",
    "children": "孩子",
    "child": "孩子",
}


def main(model_dir: str, pairs: int | None = None) -> None:
    """Print each view's hit rate on the first ``pairs`` held-out demo pairs (all: None)."""
    model, tok = load_model_and_tokenizer(model_dir)
    model.eval()
    validation = prepare_data(build_config("demo")).validation[:pairs]
    start = model.config.decoder_start_token_id
    layers, heads = model.config.decoder_layers, model.config.decoder_attention_heads
    views: list[tuple] = [(la, h) for la in range(layers) for h in range(heads)]
    views += [(la, "mean") for la in range(layers)] + [("mean", "mean")]
    hits = dict.fromkeys(views, 0)
    total, chance = 0, 0.0
    for pair in validation:
        src = tok(pair.source)["input_ids"]
        tgt = tok(text_target=pair.target)["input_ids"]
        weights = forward_attention(model, src, [start, *tgt])
        amap = AttentionMap(
            pair.source,
            pair.target,
            list(tok.convert_ids_to_tokens(src)),
            list(tok.convert_ids_to_tokens(tgt)),
            [i == tok.eos_token_id for i in src],
            [i == tok.eos_token_id for i in tgt],
            weights,
        )
        cases: list[tuple[int, int]] | None = None
        for view in views:
            rows, cols, matrix, _ = amap.view(
                layer=view[0], head=view[1], words=True, hide_special=True
            )
            if cases is None:
                words = [re.sub(r"\W", "", c.lower()) for c in cols]
                cases = [
                    (r, words.index(en))
                    for en, zh in LEXICON.items()
                    if words.count(en) == 1
                    for r, row in enumerate(rows)
                    if zh in row
                ]
                total += len(cases)
                chance += len(cases) / max(1, len(cols))
            hits[view] += sum(int(np.argmax(matrix[r]) == c) for r, c in cases)
    print(
        f"{total} lexicon cases in {len(validation)} held-out pairs; "
        f"chance {figure(ratio(chance, total), '.2f')}"
    )
    for view in sorted(views, key=lambda v: -hits[v]):
        layer = "mean" if view[0] == "mean" else view[0] + 1
        head = "mean" if view[1] == "mean" else view[1] + 1
        print(f"layer {layer}, head {head}: {figure(ratio(hits[view], total), '.2f')}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir", help="a trained model folder (best_model)")
    parser.add_argument("--pairs", type=int, default=None, help="the first N held-out pairs")
    args = parser.parse_args()
    main(args.model_dir, args.pairs)
