"""Local files of sentence pairs, in the formats MT corpora come in, read as streams.

OPUS, fairseq and Marian ship a corpus as two line-aligned plain-text files named by
language (``corpus.en`` + ``corpus.zh``, the "Moses" layout: line i of one is the
translation of line i of the other); spreadsheets and scripts write TSV/CSV with a
header and JSONL with one object per line; any of these may be gzipped; ``datasets``
writes folders. A user should be able to pass what they downloaded as it is.

Every reader yields plain ``(source, target)`` strings, uncleaned, one pair at a time: a
corpus of millions of pairs is never held whole here (:mod:`.arrow_pairs` writes them to
Arrow as they come, and cleans all formats alike, so an empty line on one side of a Moses
pair is dropped and counted like an empty row of a TSV).

A TSV line is one pair and its quotes are text: ``"Hello," she said.`` keeps its quotes,
and a line with an unclosed ``"`` is still one line. (Python's csv module and ``datasets``'
csv reader give ``"`` its CSV meaning, which strips such quotes and joins the lines after
an unclosed one into one field.) A CSV file keeps CSV's quoting: there a comma inside a
sentence needs it.
"""

from __future__ import annotations

import csv
import gzip
import json
import zlib
from collections.abc import Generator, Iterator
from itertools import zip_longest
from pathlib import Path
from typing import IO, Any, cast

from workbench.errors import WorkbenchError

#: One pair as read: source and target text, before cleaning.
TextPair = tuple[str, str]

#: Endings of a file whose name alone says it holds pairs; ``.gz`` for any of them.
LOCAL_SUFFIXES = (".tsv", ".csv", ".jsonl", ".json", ".gz")

#: Column names understood on each side when no column is named after the language.
SIDE_COLUMNS = {"source": ("source", "src"), "target": ("target", "tgt")}

_BOM = b"\xef\xbb\xbf"


def _open_bytes(path: Path) -> IO[bytes]:
    if not path.is_file():
        raise WorkbenchError(f"data file '{path}' not found; check the path passed to --data")
    if path.name.lower().endswith(".gz"):
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb")


def file_lines(path: Path) -> Generator[str, None, None]:
    """The file's lines (gunzipped when its name ends in ``.gz``), without their ends.

    Lines end at ``\\n`` (and ``\\r\\n``) only: ``str.splitlines`` also splits at U+2028,
    U+0085 and form feeds, which web-crawled corpora have inside sentences, and one such
    character would shift every later line of a line-aligned pair against the other side.
    A byte-order mark (Windows editors write one) is not part of the first line. Bytes
    that are not UTF-8, or a broken gzip stream, are one line with the fix.
    """
    offset = 0
    with _open_bytes(path) as stream:
        try:
            for number, raw in enumerate(stream):
                if number == 0 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                    offset += len(_BOM)
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise WorkbenchError(
                        f"data file '{path}' is not UTF-8 (byte {offset + err.start}); "
                        "re-save it as UTF-8"
                    ) from None
                offset += len(raw)
                yield line.removesuffix("\n").removesuffix("\r")
        except (OSError, EOFError, zlib.error) as err:  # BadGzipFile is an OSError
            raise WorkbenchError(
                f"data file '{path}' is not a readable gzip file ({err}); "
                "compress it again with gzip, or pass the uncompressed file"
            ) from None


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


def read_moses_files(source_file: Path, target_file: Path) -> Generator[TextPair, None, None]:
    """Pairs from two line-aligned files: line i of one translates line i of the other."""
    for side in (source_file, target_file):
        if not side.is_file():
            raise WorkbenchError(
                f"data file '{side}' not found: a corpus in two line-aligned files needs "
                f"both '{source_file.name}' and '{target_file.name}' (either may be .gz)"
            )
    sources, targets = file_lines(source_file), file_lines(target_file)
    count = -1
    for count, (source, target) in enumerate(zip_longest(sources, targets)):
        if source is None or target is None:
            longer = sources if target is None else targets
            rest = 1 + sum(1 for _ in longer)
            n_source, n_target = (count + rest, count) if target is None else (count, count + rest)
            raise WorkbenchError(
                f"line-aligned files '{source_file}' ({n_source:,} lines) and "
                f"'{target_file}' ({n_target:,} lines) differ in length; line i of one must "
                "be the translation of line i of the other, so fix or re-export them together"
            )
        yield source, target
    if count < 0:
        raise WorkbenchError(f"data files '{source_file}' and '{target_file}' are empty")


class _Columns:
    """Where each side's text is in a record: its language's column first (or the
    ``translation`` dict's key), then ``source``/``src`` style names."""

    def __init__(self, source_lang: str, target_lang: str, where: str) -> None:
        self.langs = {"source": source_lang, "target": target_lang}
        self.where = where

    def pick(self, record: dict[str, Any], side: str) -> str:
        lang = self.langs[side]
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
                    f"{self.where} has no '{lang}' column (found: "
                    f"{', '.join(map(str, record))}); name the columns after the languages "
                    "(a header 'en<TAB>zh') or source/target, or pass "
                    "--source-lang/--target-lang"
                )
            value = record[names[0]]
        return str(value or "")

    def pair(self, record: dict[str, Any]) -> TextPair:
        return self.pick(record, "source"), self.pick(record, "target")

    def header_indices(self, header: list[str]) -> tuple[int, int]:
        """The positions of the source and target columns in a table's header."""
        probe = {name: i for i, name in enumerate(header)}
        source, target = self.pair({name: str(i) for name, i in probe.items()})
        return int(source), int(target)


def _tsv_rows(path: Path, columns: _Columns) -> Iterator[TextPair]:
    """A TSV's pairs: each line split at its tabs, quotes and all kept as text."""
    lines = file_lines(path)
    header = next(lines, None)
    if header is None:
        return
    names = header.split("\t")
    source_at, target_at = columns.header_indices(names)
    for number, line in enumerate(lines, 2):
        if not line.strip():
            continue  # a blank line is not a pair (an editor's last line, say)
        fields = line.split("\t")
        if len(fields) != len(names):
            raise WorkbenchError(
                f"data file '{path}' line {number:,} has {len(fields)} tab-separated fields, "
                f"the header has {len(names)}; a TSV line is one pair, so remove the stray "
                "tab (or add the missing one) on that line"
            )
        yield fields[source_at], fields[target_at]


def _csv_rows(path: Path, columns: _Columns) -> Iterator[TextPair]:
    """A CSV's pairs, with CSV's quoting (a quoted field may hold a comma or a newline)."""
    reader = csv.reader(f"{line}\n" for line in file_lines(path))
    header = next(reader, None)
    if header is None:
        return
    source_at, target_at = columns.header_indices(header)
    for row in reader:
        if not row:
            continue
        padded = row + [""] * (len(header) - len(row))
        yield padded[source_at], padded[target_at]


def _jsonl_rows(path: Path, columns: _Columns) -> Iterator[TextPair]:
    for number, line in enumerate(file_lines(path), 1):
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
        yield columns.pair(row)


def read_pair_file(
    path: Path, source_lang: str, target_lang: str
) -> Generator[TextPair, None, None]:
    """Pairs from a TSV/CSV (its header names the columns) or JSONL file, maybe gzipped."""
    suffix = Path(_without_gz(path.name)).suffix.lower()
    columns = _Columns(source_lang, target_lang, f"data file '{path}'")
    reader = {".jsonl": _jsonl_rows, ".json": _jsonl_rows, ".csv": _csv_rows}.get(suffix, _tsv_rows)
    lines = file_lines(path)
    if not any(line.strip() for line in lines):
        raise WorkbenchError(f"data file '{path}' is empty; it needs a header and pairs")
    lines.close()
    count = 0
    for pair in reader(path, columns):
        count += 1
        yield pair
    if not count and reader is not _jsonl_rows:
        raise WorkbenchError(f"data file '{path}' has a header but no pairs")


def read_datasets_folder(
    path: Path, source_lang: str, target_lang: str
) -> Generator[TextPair, None, None]:
    """Pairs from a folder written by ``datasets``' ``save_to_disk`` (all splits pooled)."""
    import datasets

    try:
        loaded = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as err:
        raise WorkbenchError(
            f"'{path}' is not a datasets folder ({err}); pass a TSV/CSV/JSONL file instead"
        ) from None
    splits = loaded.values() if isinstance(loaded, datasets.DatasetDict) else [loaded]
    columns = _Columns(source_lang, target_lang, f"dataset '{path}'")
    for split in splits:
        for batch in split.iter(batch_size=10_000):
            names = list(batch)
            for values in zip(*batch.values(), strict=True):
                yield columns.pair(dict(zip(names, values, strict=True)))


def read_local_rows(
    path: Path, source_lang: str, target_lang: str
) -> Generator[TextPair, None, None]:
    """Pairs from a line-aligned pair of files, a table file or a ``datasets`` folder."""
    moses = moses_files(path, source_lang, target_lang)
    if moses is not None:
        return read_moses_files(*moses)
    if path.is_dir():
        return read_datasets_folder(path, source_lang, target_lang)
    return read_pair_file(path, source_lang, target_lang)
