# The checks of the README's test command, one target each (`make lint`: ruff and the
# import contracts), with the tools of the venv that command sets up (.venv). `make test`
# runs the suite exactly as that command does (tests/meta/test_readme.py checks it);
# `make test-fast` leaves out the end-to-end runs (everything but tests/e2e, which its
# conftest.py marks slow), in three processes: those tests wait more than they compute.

.PHONY: lint type test-fast test

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/lint-imports

type:
	.venv/bin/mypy

test-fast:
	HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -n 3 --dist worksteal -m "not slow"

test:
	HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -n 3 --dist worksteal
