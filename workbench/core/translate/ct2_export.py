"""Exports for CTranslate2: which files make a model, whether an export still matches
them (a fingerprint), choosing one to translate with, and making one.

How each model family is converted is :mod:`workbench.core.translate.ct2_convert`'s."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from workbench.core.atomic import save_atomically
from workbench.core.decoding import BACKENDS
from workbench.core.run_folder.layout import MODEL_CONFIG_FILE
from workbench.core.translate.ct2 import (
    DEFAULT_QUANTIZATION,
    EXPORT_PREFIX,
    INSTALL_HINT,
    QUANTIZATIONS,
    ctranslate2_available,
    import_ctranslate2,
)
from workbench.core.translate.ct2_export_info import (
    COPIED_FILES,
    EXPORT_INFO,
    ExportInfo,
    SourceFile,
    read_export_info,
)
from workbench.errors import WorkbenchError

WEIGHT_SUFFIXES = (".safetensors", ".bin")
WEIGHT_PREFIXES = ("model", "pytorch_model")


# --- which files make a model, and whether an export still matches them ----------------


def _source_files(model_dir: Path) -> list[Path]:
    """Files whose change changes translations: weights, config, tokenizer, settings."""
    names = {MODEL_CONFIG_FILE, *COPIED_FILES}
    files = [
        p
        for p in model_dir.iterdir()
        if p.is_file()
        and (
            p.name in names
            or (p.name.startswith(WEIGHT_PREFIXES) and p.name.endswith(WEIGHT_SUFFIXES))
            or p.name.endswith(".safetensors.index.json")
        )
    ]
    return sorted(files)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(model_dir: Path) -> dict[str, SourceFile]:
    """Size, modification time and SHA-256 of each file that makes the model."""
    return {
        p.name: SourceFile(p.stat().st_size, p.stat().st_mtime_ns, _sha256(p))
        for p in _source_files(model_dir)
    }


def matches(model_dir: Path, recorded: dict[str, SourceFile]) -> bool:
    """True when the model's files are the ones the export was made from.

    Size and mtime decide in the common case without reading the weights; a file whose
    mtime changed (a copy without ``-p``) is hashed, so a copied model keeps its export.
    """
    files = _source_files(model_dir)
    if sorted(recorded) != [p.name for p in files]:
        return False
    for path in files:
        was = recorded[path.name]
        stat = path.stat()
        if stat.st_size != was.size:
            return False
        if stat.st_mtime_ns != was.mtime_ns and _sha256(path) != was.sha256:
            return False
    return True


def is_export(path: Path) -> bool:
    """True for a folder written by :func:`export_ctranslate2` (complete, as it is renamed
    into place only when finished)."""
    return (path / EXPORT_INFO).is_file() and (path / "model.bin").is_file()


@dataclass(frozen=True)
class ExportState:
    """One export found next to a model, and whether it still matches the model."""

    path: Path
    quantization: str
    fresh: bool


def find_exports(model_dir: Path) -> list[ExportState]:
    """Exports next to a model, usable ones first, int8 (fastest on CPU) before others."""
    if not model_dir.is_dir():
        return []
    states = []
    for path in model_dir.iterdir():
        if path.is_dir() and path.name.startswith(EXPORT_PREFIX) and is_export(path):
            info = read_export_info(path)
            states.append(
                ExportState(path, info.quantization, matches(model_dir, info.source_files))
            )

    def rank(state: ExportState) -> tuple[bool, int, str]:
        order = (
            QUANTIZATIONS.index(state.quantization)
            if state.quantization in QUANTIZATIONS
            else len(QUANTIZATIONS)
        )
        return (not state.fresh, order, state.path.name)

    return sorted(states, key=rank)


def export_command(model: str | Path) -> str:
    """The command that (re)builds the export of ``model``."""
    return f"workbench export --ctranslate2 --model {model}"


def choose_export(model: str, requested: str) -> tuple[Path | None, list[str]]:
    """The export to translate with (None: use transformers) and notices for the user.

    ``auto`` takes a fresh export when ctranslate2 is importable and otherwise falls back,
    saying why when an export exists; ``ct2`` fails with the fix instead of falling back.
    """
    if requested not in BACKENDS:
        raise WorkbenchError(f"--backend must be one of {', '.join(BACKENDS)}, got '{requested}'")
    path = Path(model).expanduser()
    if is_export(path):  # --model names an export folder itself
        if requested == "transformers":
            source = read_export_info(path).source or "the folder it was exported from"
            raise WorkbenchError(
                f"'{model}' is a CTranslate2 export; use --backend ct2, or "
                f"--model {source} for transformers"
            )
        import_ctranslate2()
        return path, []
    if requested == "transformers":
        return None, []
    if not path.is_dir():
        if requested == "ct2":
            from workbench.core.data.sources import looks_like_local_path
            from workbench.core.model.load import check_local_model

            if looks_like_local_path(model):
                check_local_model(path)
            raise WorkbenchError(
                f"--backend ct2 needs a saved model folder with an export; "
                f"'{model}' is not a folder"
            )
        return None, []
    exports = find_exports(path)
    fresh = [e for e in exports if e.fresh]
    stale = (
        f"the CTranslate2 export {exports[0].path} was made from an older version of "
        f"the model; rebuild it: {export_command(model)}"
        if exports
        else ""
    )
    if requested == "ct2":
        import_ctranslate2()
        if not exports:
            raise WorkbenchError(
                f"'{model}' has no CTranslate2 export yet; create one with: {export_command(model)}"
            )
        if not fresh:
            raise WorkbenchError(stale)
        return fresh[0].path, []
    if not fresh:
        return None, ([stale + " (translating with transformers meanwhile)"] if stale else [])
    if not ctranslate2_available():
        return None, [
            f"{fresh[0].path} is a CTranslate2 export but ctranslate2 is not "
            f"installed, so transformers translates; {INSTALL_HINT} to use it"
        ]
    return fresh[0].path, []


# --- export ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportResult:
    """What ``export_ctranslate2`` did."""

    path: Path
    quantization: str
    seconds: float
    size_bytes: int
    rebuilt: bool


def export_dir_for(model_dir: Path, quantization: str) -> Path:
    """Where the export of ``model_dir`` with ``quantization`` lives."""
    return model_dir / f"{EXPORT_PREFIX}{quantization}"


def check_exportable(model: str) -> Path:
    """The saved model folder to export, or one line saying why ``model`` is not one.

    A Hub id is refused even when it is cached: the export sits next to the model so that
    ``translate`` finds it, and the Hub cache is not a place to write into. Exports are
    for the model you fine-tuned, which is always a folder.
    """
    from workbench.core.data.sources import looks_like_local_path
    from workbench.core.model.load import check_local_model

    path = Path(model).expanduser()
    if not looks_like_local_path(model):
        raise WorkbenchError(
            f"export needs a saved model folder, and '{model}' looks like a "
            "Hub id; pass the folder a run saved (translation_output/"
            "best_model) or save the Hub model with save_pretrained first"
        )
    if is_export(path):
        raise WorkbenchError(
            f"'{model}' is already a CTranslate2 export; pass the model folder it was made from"
        )
    check_local_model(path)
    return path


def export_ctranslate2(
    model: str, quantization: str = DEFAULT_QUANTIZATION, force: bool = False
) -> ExportResult:
    """Convert a saved model into ``<model>/ct2-<quantization>/``, atomically.

    The conversion is written to a hidden sibling and renamed into place only when
    complete, so an interrupted export never leaves a folder that ``auto`` would use.
    An export that still matches the model is kept unless ``force``.
    """
    if quantization not in QUANTIZATIONS:
        raise WorkbenchError(
            f"--quantization must be one of {', '.join(QUANTIZATIONS)}, got '{quantization}'"
        )
    model_dir = check_exportable(model)
    ct2 = import_ctranslate2()
    target = export_dir_for(model_dir, quantization)
    if (
        is_export(target)
        and not force
        and matches(model_dir, read_export_info(target).source_files)
    ):
        return ExportResult(target, quantization, 0.0, _size(target), rebuilt=False)

    started = time.perf_counter()
    source_files = fingerprint(model_dir)

    def write(staging: Path) -> None:
        from workbench.core.translate.ct2_convert import convert_model

        facts = convert_model(model_dir, staging, quantization)
        # The model's own files last: its generation_config.json replaces the one a
        # decoder-only conversion writes (the same settings, as the user saved them).
        for name in COPIED_FILES:
            if (model_dir / name).is_file():
                shutil.copy2(model_dir / name, staging / name)
        info = ExportInfo(
            source=str(model_dir),
            source_files=source_files,
            quantization=quantization,
            model_type=facts.model_type,
            max_positions=facts.max_positions,
            causal=facts.causal,
            sliding_window=facts.sliding_window,
            ctranslate2_version=ct2.__version__,
            created=time.strftime("%Y-%m-%dT%H:%M:%S"),
        )
        text = json.dumps(info.to_dict(), indent=2)
        (staging / EXPORT_INFO).write_text(text, encoding="utf-8")

    try:
        save_atomically(target, write)
    except OSError as err:
        raise WorkbenchError(
            f"cannot write the export to {target}: {err.strerror or err}"
        ) from None
    return ExportResult(
        target, quantization, time.perf_counter() - started, _size(target), rebuilt=True
    )


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
