"""No password in a URL reaches a user's screen by way of an error (workbench.errors)."""

from __future__ import annotations

import pytest

from workbench.errors import HubUnreachableError, WorkbenchError, without_passwords


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "postgresql://bob:s3cret@db.example:5432/sweeps",
            "postgresql://bob:***@db.example:5432/sweeps",
        ),
        (
            "the proxy http://me:p%40ss@127.0.0.1:3128 (from HTTP_PROXY) did not answer",
            "the proxy http://me:***@127.0.0.1:3128 (from HTTP_PROXY) did not answer",
        ),
        (
            "postgresql+psycopg2://u:x@h/db and https://a:b@mirror.example/ both",
            "postgresql+psycopg2://u:***@h/db and https://a:***@mirror.example/ both",
        ),
        (
            "data file 'https:/alice:s3cret@example.invalid/pairs.tsv' not found",
            "data file 'https:/alice:***@example.invalid/pairs.tsv' not found",
        ),  # a URL that went through Path keeps one slash
        ("sqlite:///tmp/out/sweeps/demo.db", "sqlite:///tmp/out/sweeps/demo.db"),
        ("C:/Users/ann/pairs.tsv and a:b@c", "C:/Users/ann/pairs.tsv and a:b@c"),
        (
            "https://user@host/path and http://127.0.0.1:8080/x",
            "https://user@host/path and http://127.0.0.1:8080/x",
        ),  # no password, nothing hidden; a port is no password
    ],
)
def test_passwords_in_urls_are_hidden_and_nothing_else_changes(text: str, shown: str):
    assert without_passwords(text) == shown


def test_every_error_hides_the_password_it_is_given():
    err = WorkbenchError("cannot open the sweep's study at 'postgresql://bob:s3cret@h/db'")
    assert "s3cret" not in str(err)
    assert "bob:***@h/db" in str(err)
    assert "s3cret" not in str(HubUnreachableError("via http://u:s3cret@proxy:3128"))
