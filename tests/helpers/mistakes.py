"""Every user mistake the issue lists, as files to plant, a command and what its answer must
say: tests/cli/test_user_mistakes.py makes each for real, and benchmarks/user_mistakes.py
times them."""

from __future__ import annotations

TRAIN = ("train", "--headless", "--preset", "demo", "--no-interact")


# name -> (files to create, argv, env, words the one line must contain)
MISTAKES = {
    "hub unreachable": (
        {},
        ("train", "--headless", "--preset", "opus-en-zh"),
        {"HF_HUB_OFFLINE": "1"},
        ["Helsinki-NLP/opus-mt-en-zh", "HF_ENDPOINT", "HF_HUB_OFFLINE", "--preset demo"],
    ),
    "hub unreachable, no offline flag": (
        {},
        ("train", "--headless", "--preset", "opus-en-zh"),
        {"HF_HUB_OFFLINE": "", "HF_ENDPOINT": "http://127.0.0.1:9"},
        ["127.0.0.1:9", "HF_ENDPOINT", "--preset demo"],
    ),
    "model path missing": (
        {},
        (*TRAIN, "--model", "./no_such_model"),
        {},
        ["no_such_model", "does not exist"],
    ),
    "dataset file missing": ({}, (*TRAIN, "--data", "pairs.tsv"), {}, ["pairs.tsv", "not found"]),
    "dataset URL with a password": (
        {},
        (*TRAIN, "--data", "https://alice:s3cret@example.invalid/pairs.tsv"),
        {},
        ["alice:***@example.invalid/pairs.tsv", "not found"],  # the path's one slash too
    ),
    "test data file missing": (
        {},
        (*TRAIN, "--test-data", "held-out.tsv"),
        {},
        ["held-out.tsv", "--test-data"],
    ),
    "fp16 without a GPU": ({}, (*TRAIN, "--fp16"), {}, ["--fp16", "CUDA", "--bf16"]),
    "dataset file empty": (
        {"pairs.tsv": b""},
        (*TRAIN, "--data", "pairs.tsv"),
        {},
        ["pairs.tsv", "empty"],
    ),
    "dataset not UTF-8": (
        {"pairs.tsv": b"en\tzh\n\xff\xfe bad\tbytes\n"},
        (*TRAIN, "--data", "pairs.tsv"),
        {},
        ["pairs.tsv", "not UTF-8"],
    ),
    "dataset lacks columns": (
        {"pairs.tsv": b"english\tchinese\nhi\tni hao\n"},
        (*TRAIN, "--data", "pairs.tsv"),
        {},
        ["pairs.tsv", "'en'", "--source-lang"],
    ),
    "output folder not writable": (
        {"blocker": b"a file, not a folder"},
        (*TRAIN, "--output-dir", "blocker/out"),
        {},
        ["blocker/out", "--output-dir"],
    ),
    "learning rate out of range": ({}, (*TRAIN, "--lr", "-5"), {}, ["-5", "learning rate"]),
    "epochs out of range": ({}, (*TRAIN, "--epochs", "0"), {}, ["epochs", "0"]),
    "batch size not a number": ({}, (*TRAIN, "--batch-size", "lots"), {}, ["lots", "batch"]),
    "resume with nothing to resume": (
        {},
        (*TRAIN, "--resume"),
        {},
        ["nothing to resume", "without --resume"],
    ),
    "interact with no saved model yet": (
        {},
        ("interact",),
        {},
        ["no saved model", "workbench train"],
    ),
}
