"""SAMPLING.md, written from benchmarks/sampling.py's draws: each scheme's reads, a model of
their time over a network, the corpus, and what the figures say in words."""

from __future__ import annotations

import argparse
import datetime
import os
import platform
from typing import Any

import pyarrow as pa
from figures import figure, ratio
from sampling_corpus import FILES, GROUP

LATENCY_S = 0.05  # the network model in the report: a request's round trip
BANDWIDTH_BPS = 50e6  # ... and a download rate


def write_report(
    args: argparse.Namespace,
    results: list[tuple[str, dict[str, Any]]],
    size: int,
    footer: int,
    en_chars: float,
    zh_chars: float,
    build_s: float,
) -> None:
    """Write the report: each scheme's reads, a model of their time on the Hub, the corpus."""
    header = (
        "| scheme | row groups read | distinct 1,000-line windows | max rows from one group "
        "| files | range reads | bytes fetched | wall |"
    )
    lines = [header, "|" + "---|" * 8]
    for label, r in results:
        lines.append(
            f"| {label} | {r['windows']:,} | {r['windows']:,} | {figure(r['max_per_window'])} "
            f"| {r['files']} | {r['reads']:,} | {r['bytes'] / 2**20:,.1f} MiB "
            f"| {r['wall']:.1f} s |"
        )
    table = "\n".join(lines)
    model = ["| scheme | range reads x 50 ms | bytes at 50 MB/s | total |", "|---|---|---|---|"]
    for label, r in results:
        latency, transfer = r["reads"] * LATENCY_S, r["bytes"] / BANDWIDTH_BPS
        model.append(
            f"| {label} | {latency:,.0f} s | {transfer:,.0f} s | {latency + transfer:,.0f} s |"
        )
    command = (
        f"python benchmarks/sampling.py --folder {args.folder} --rows-per-file "
        f"{args.rows_per_file} --n {args.n} --seed {args.seed}"
    )
    rows = FILES * args.rows_per_file
    args.out.write_text(
        f"""# How the WMT19 sample is drawn: old plan against new

Command: `{command}`
Run on {datetime.date.today().isoformat()}: {platform.machine()}, {os.cpu_count()} CPU cores
shared with other work, Python {platform.python_version()}, pyarrow {pa.__version__}.
Corpus ready in {build_s:.0f} s (built by this run, or reused from an earlier one).

**Corpus**: a local stand-in for WMT19 zh-en's train split. {FILES} parquet files of
{args.rows_per_file:,} rows ({rows:,} in all), row groups of {GROUP:,} rows, one
`translation` struct column: English of ~{en_chars:.0f} characters (15-35 Zipf-distributed
random words), Chinese of ~{zh_chars:.0f} characters (Zipf-distributed random CJK
characters), snappy. {size / 2**30:.2f} GiB on disk, {size / rows:.0f} bytes a row (the
real split: ~3.6 GB for ~26M rows, ~140 bytes a row; random text compresses worse, so the
bytes here are an upper bound). Footer: {footer / 2**10:,.0f} KiB a file.

**Sample**: {args.n:,} pairs, seed {args.seed}. Each run reads through a filesystem that
opens the local files as `HfFileSystem` opens Hub files (fsspec buffered files, one range
read per cache miss) and counts the reads and bytes fetched. "before" is the reader and
plan shipped before issue 12, reimplemented in the benchmark for comparison only; "now" is
`workbench.core.data.sample_reads.read_sample` as it is; the two middle rows swap in the old
plan, or fsspec's default 5 MiB read-ahead, to show each change alone. Windows are counted
from the sampled rows' own `f<file> r<row>` labels; with 1,000-row groups a window is a
row group, so "row groups read" and "distinct windows" agree.

{table}

Wall time is local reads (page cache) plus parquet decoding. Over the network every range
read is also an HTTP request (the Hub answers `/resolve/` with a redirect to its CDN), so
there the number of reads weighs as much as the bytes. A model, not a measurement, at
{LATENCY_S * 1000:.0f} ms a request and {BANDWIDTH_BPS / 1e6:.0f} MB/s, reads one after
another:

{chr(10).join(model)}

{findings(results, size)}
""",
        encoding="utf-8",
    )


def findings(results: list[tuple[str, dict[str, Any]]], size: int) -> str:
    """What the table says, in words, from this run's figures."""
    before, old_exact, new_ahead, now = (r for _label, r in results)
    mib = 2**20
    return f"""**Reading the figures.** The old plan drew the sample from {before["windows"]:,}
windows of 1,000 consecutive lines, up to {figure(before["max_per_window"])} lines from one
window; the new plan from {now["windows"]:,} windows, at most {figure(now["max_per_window"])}
from one.
Without read-ahead the old plan would have fetched {old_exact["bytes"] / mib:,.0f} MiB
instead of {before["bytes"] / mib:,.0f} MiB. The new plan fetches
{now["bytes"] / mib:,.0f} MiB ({figure(ratio(now["bytes"], size), ".0%")} of the corpus): with
read-ahead it would fetch {new_ahead["bytes"] / mib:,.0f} MiB
({figure(ratio(new_ahead["bytes"], size), ".0%")}), since
its row groups are close enough together for each 5 MiB block to reach the next one. The
price of reading exactly is one request per row group ({now["reads"]:,} against
{new_ahead["reads"]:,}): read one after another over a network with a round trip of tens
of milliseconds, the requests rather than the bytes set the time, and in the model above
the read-ahead variant finishes first despite downloading
{figure(ratio(new_ahead["bytes"], now["bytes"]), ".1f")}x the bytes. Reading the {FILES}
files concurrently (one open file each) would divide the request time by up to {FILES};
the reader does not do that yet."""
