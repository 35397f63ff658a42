"""The local stand-in for WMT19 zh-en's train split that benchmarks/sampling.py samples.

13 parquet files shaped like the real split's: row groups of 1,000 rows, one
``translation`` struct column ``{en, zh}``. English: ~25 words drawn from a
Zipf-distributed 5,000-word vocabulary (~140 characters); Chinese: ~40 characters drawn
Zipf-wise from 3,000 CJK characters. Snappy compression, as ``datasets`` writes. The text
is random, so it compresses a little worse than real sentences: byte counts are a mild upper
bound. Every row's English starts with ``f<file> r<row>``, so a sample says where it came
from. Generated with numpy and arrow, not row by row: millions of rows a file.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

FILES = 13
GROUP = 1_000  # rows per row group, as in WMT19 zh-en's parquet files
CHUNK = 100_000  # rows generated at a time (~40 MB of text)


def zipf_choice(rng: np.random.Generator, k: int, size: int) -> np.ndarray:
    """``size`` draws from ``range(k)`` with p proportional to 1 / (rank + 1)."""
    p = 1.0 / np.arange(1, k + 1)
    return rng.choice(k, size=size, p=p / p.sum())


def string_array(data: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """An arrow string array from UTF-8 bytes and per-row byte lengths, without Python."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return pa.LargeStringArray.from_buffers(
        len(lengths), pa.py_buffer(offsets), pa.py_buffer(data)
    ).cast(pa.string())


def english(rng: np.random.Generator, labels: pa.Array, vocab: list[bytes]) -> pa.Array:
    """Rows ``<label>w w w ... w.`` of ~25 Zipf-distributed words (~140 characters)."""
    words = rng.integers(15, 36, size=len(labels))  # 15..35 words, mean 25
    flat = np.frombuffer(b"".join(w + b" " for w in vocab), dtype=np.uint8)
    vlen = np.array([len(w) + 1 for w in vocab])  # each word with its trailing space
    vstart = np.concatenate([[0], np.cumsum(vlen)[:-1]])
    tokens = zipf_choice(rng, len(vocab), int(words.sum()))
    tlen = vlen[tokens]
    # Byte j of the text comes from byte (j - start of its token) of the token's word.
    tend = np.cumsum(tlen)
    owner = np.repeat(np.arange(len(tokens)), tlen)
    body = flat[vstart[tokens][owner] + np.arange(len(owner)) - (tend - tlen)[owner]]
    body[tend[np.cumsum(words) - 1] - 1] = ord(".")  # each row ends "word."
    row_bytes = np.add.reduceat(tlen, np.concatenate([[0], np.cumsum(words)[:-1]]))
    return pc.binary_join_element_wise(labels, string_array(body, row_bytes), "")


def chinese(rng: np.random.Generator, rows: int) -> pa.Array:
    """Rows of ~40 Zipf-distributed common CJK characters (3 UTF-8 bytes each) and 。."""
    chars = rng.integers(25, 56, size=rows)  # 25..55 characters, mean 40
    cp = 0x4E00 + zipf_choice(rng, 3_000, int(chars.sum()))
    cp[np.cumsum(chars) - 1] = 0x3002  # 。 ends each row
    utf8 = np.stack([0xE0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3F), 0x80 | (cp & 0x3F)], 1)
    return string_array(utf8.astype(np.uint8).ravel(), chars * 3)


def build_corpus(folder: Path, rows_per_file: int, seed: int = 1234) -> list[Path]:
    """Write (or reuse) the 13 parquet files; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    # 1..7 letters, in random order: Zipf's frequent words are not all the short ones.
    vocab = [
        bytes(letters[rng.integers(0, 26, size=int(k))]) for k in rng.integers(1, 8, size=5_000)
    ]
    paths = []
    for f in range(FILES):
        path = folder / f"train-{f:05d}-of-{FILES:05d}.parquet"
        paths.append(path)
        if path.is_file() and pq.ParquetFile(path).metadata.num_rows == rows_per_file:
            continue
        start = time.perf_counter()
        tmp = path.with_suffix(".tmp")
        schema = pa.schema([("translation", pa.struct([("en", pa.string()), ("zh", pa.string())]))])
        with pq.ParquetWriter(tmp, schema, compression="snappy") as writer:
            for first in range(0, rows_per_file, CHUNK):
                rows = min(CHUNK, rows_per_file - first)
                labels = pa.array([f"f{f} r{r} " for r in range(first, first + rows)])
                column = pa.StructArray.from_arrays(
                    [english(rng, labels, vocab), chinese(rng, rows)], names=["en", "zh"]
                )
                writer.write_table(pa.table({"translation": column}), row_group_size=GROUP)
        tmp.replace(path)
        print(
            f"  wrote {path.name}: {path.stat().st_size / 2**20:,.0f} MiB "
            f"in {time.perf_counter() - start:.0f} s",
            flush=True,
        )
    return paths
