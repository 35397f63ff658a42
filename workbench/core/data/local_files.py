"""Local files of sentence pairs, in the formats MT corpora come in.

OPUS, fairseq and Marian ship a corpus as two line-aligned plain-text files named by
language (``corpus.en`` + ``corpus.zh``, the "Moses" layout: line i of one is the
translation of line i of the other); spreadsheets and scripts write TSV/CSV with a
header and JSONL with one object per line; any of these may be gzipped; ``datasets``
writes folders. A user should be able to pass what they downloaded as it is.

Every reader returns plain ``(source, target)`` strings, uncleaned: :mod:`.pairs` turns
them into its ``Pair`` and cleans all formats alike, so an empty line on one side of a
Moses pair is dropped and counted like an empty row of a TSV.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import zlib
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError

#: One pair as read: source and target text, before cleaning.
TextPair = tuple[str, str]

#: Endings of a file whose name alone says it holds pairs; ``.gz`` for any of them.
LOCAL_SUFFIXES = (".tsv", ".csv", ".jsonl", ".json", ".gz")

#: Column names understood on each side when no column is named after the language.
SIDE_COLUMNS = {"source": ("source", "src"), "target": ("target", "tgt")}


def read_text(path: Path) -> str:
    """The file's text, gunzipped when its name ends in ``.gz``; one line per failure."""
    if not path.is_file():
        raise WorkbenchError(f"data file '{path}' not found; check the path passed to --data")
    raw = path.read_bytes()
    if path.name.lower().endswith(".gz"):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as err:  # BadGzipFile is an OSError
            raise WorkbenchError(
                f"data file '{path}' is not a readable gzip file ({err}); "
                "compress it again with gzip, or pass the uncompressed file"
            ) from None
    try:
        # utf-8-sig: a byte-order mark (Windows editors write one) is not part of the
        # first column's name or the first sentence.
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise WorkbenchError(
            f"data file '{path}' is not UTF-8 (byte {err.start}); re-save it as UTF-8"
        ) from None


def text_lines(text: str) -> list[str]:
    """The lines of ``text``, split at ``\\n`` (and ``\\r\\n``) only.

    ``str.splitlines`` also splits at U+2028, U+0085 and form feeds, which web-crawled
    corpora have inside sentences: one such character would shift every later line of a
    line-aligned pair against the other side.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _without_gz(name: str) -> str:
    """``pairs.tsv`` for ``pairs.tsv.gz``: the name that says the format."""
    return name[:-3] if name.lower().endswith(".gz") else name


def _side_file(prefix: Path, lang: str) -> Path | None:
    """``PREFIX.lang`` or ``PREFIX.lang.gz``, whichever is a file."""
    for candidate in (Path(f"{prefix}.{lang}"), Path(f"{prefix}.{lang}.gz")):
        if candidate.is_file():
            return candidate
    return None


def moses_files(path: Path, source_lang: str, target_lang: str) -> tuple[Path, Path] | None:
    """The (source, target) files of the line-aligned pair ``path`` names, or None.

    ``path`` names one when it is one of the two files (``corpus.en``, ``corpus.en.gz``:
    the other side is looked for next to it), or when nothing is at ``path`` itself and
    it is their common prefix (``corpus``) with at least one side on disk. A missing
    other side is returned as its plain name, for :func:`read_moses_files` to report.
    """
    bare = _without_gz(path.name)
    lang = bare.rsplit(".", 1)[-1] if "." in bare else ""
    sides: dict[str, Path | None]
    if lang in (source_lang, target_lang) and path.is_file():
        prefix = path.parent / bare[: -len(lang) - 1]
        other = target_lang if lang == source_lang else source_lang
        sides = {lang: path, other: _side_file(prefix, other)}
    elif path.exists():
        return None
    else:
        prefix = path
        sides = {code: _side_file(prefix, code) for code in (source_lang, target_lang)}
        if not any(sides.values()):
            return None
    source = sides[source_lang] or Path(f"{prefix}.{source_lang}")
    target = sides[target_lang] or Path(f"{prefix}.{target_lang}")
    return source, target


def read_moses_files(source_file: Path, target_file: Path) -> list[TextPair]:
    """Pairs from two line-aligned files: line i of one translates line i of the other."""
    for side in (source_file, target_file):
        if not side.is_file():
            raise WorkbenchError(
                f"data file '{side}' not found: a corpus in two line-aligned files needs "
                f"both '{source_file.name}' and '{target_file.name}' (either may be .gz)"
            )
    sources = text_lines(read_text(source_file))
    targets = text_lines(read_text(target_file))
    if len(sources) != len(targets):
        raise WorkbenchError(
            f"line-aligned files '{source_file}' ({len(sources):,} lines) and "
            f"'{target_file}' ({len(targets):,} lines) differ in length; line i of one must "
            "be the translation of line i of the other, so fix or re-export them together"
        )
    return list(zip(sources, targets, strict=True))


def _pick(record: dict[str, Any], lang: str, side: str, where: str) -> str:
    """The record's text in ``lang``: its language column first, then source/src style."""
    value: Any
    nested = record.get("translation")
    if lang in record:
        value = record[lang]
    elif isinstance(nested, dict) and lang in nested:
        value = nested[lang]
    else:
        names = [name for name in SIDE_COLUMNS[side] if name in record]
        if not names:
            raise WorkbenchError(
                f"{where} has no '{lang}' column (found: {', '.join(map(str, record))}); "
                "name the columns after the languages (a header 'en<TAB>zh') or "
                "source/target, or pass --source-lang/--target-lang"
            )
        value = record[names[0]]
    return str(value or "")


def _rows_to_pairs(
    rows: list[dict[str, Any]], source_lang: str, target_lang: str, where: str
) -> list[TextPair]:
    return [
        (_pick(r, source_lang, "source", where), _pick(r, target_lang, "target", where))
        for r in rows
    ]


def read_pair_file(path: Path, source_lang: str, target_lang: str) -> list[TextPair]:
    """Pairs from a TSV/CSV (its header names the columns) or JSONL file, maybe gzipped."""
    text = read_text(path)
    if not text.strip():
        raise WorkbenchError(f"data file '{path}' is empty; it needs a header and pairs")
    suffix = Path(_without_gz(path.name)).suffix.lower()
    rows: list[dict[str, Any]] = []
    if suffix in (".jsonl", ".json"):
        for number, line in enumerate(text_lines(text), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise WorkbenchError(
                    f"data file '{path}' line {number} is not JSON; use one object per line"
                ) from None
            if not isinstance(row, dict):
                raise WorkbenchError(f"data file '{path}' line {number} is not a JSON object")
            rows.append(row)
    else:
        delimiter = "\t" if suffix == ".tsv" else ","
        # newline="": the csv module's own line handling, so a quoted field may hold one.
        rows = list(csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter))
        if not rows:
            raise WorkbenchError(f"data file '{path}' has a header but no pairs")
    return _rows_to_pairs(rows, source_lang, target_lang, f"data file '{path}'")


def read_datasets_folder(path: Path, source_lang: str, target_lang: str) -> list[TextPair]:
    """Pairs from a folder written by ``datasets``' ``save_to_disk`` (all splits pooled)."""
    import datasets

    try:
        loaded = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as err:
        raise WorkbenchError(
            f"'{path}' is not a datasets folder ({err}); pass a TSV/CSV/JSONL file instead"
        ) from None
    splits = loaded.values() if isinstance(loaded, datasets.DatasetDict) else [loaded]
    rows = [r for split in splits for r in split]
    return _rows_to_pairs(rows, source_lang, target_lang, f"dataset '{path}'")


def read_local_rows(path: Path, source_lang: str, target_lang: str) -> list[TextPair]:
    """Pairs from a line-aligned pair of files, a table file or a ``datasets`` folder."""
    moses = moses_files(path, source_lang, target_lang)
    if moses is not None:
        return read_moses_files(*moses)
    if path.is_dir():
        return read_datasets_folder(path, source_lang, target_lang)
    return read_pair_file(path, source_lang, target_lang)
