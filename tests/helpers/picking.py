"""Models whose candidates differ: the tiny fixtures redrawn with larger weights (their
own init answers every sentence alike, and every sample alike), copied and exported."""

from __future__ import annotations

import shutil
from pathlib import Path

import torch


def varied_copy(source: Path, target: Path, causal: bool = False, export: bool = True) -> Path:
    """``source`` copied to ``target`` with every matrix redrawn (std 0.3, seed 0), and a
    float32 CTranslate2 export beside it when ``export``."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

    from workbench.core.translate.ct2_export import export_ctranslate2

    shutil.copytree(source, target, ignore=shutil.ignore_patterns("ct2-*"))
    auto = AutoModelForCausalLM if causal else AutoModelForSeq2SeqLM
    model = auto.from_pretrained(str(target))
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() >= 2:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.3)
    model.save_pretrained(str(target))
    if export:
        export_ctranslate2(str(target), "float32")
    return target
