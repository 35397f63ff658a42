"""``workbench serve`` in a real browser: Debian's chromium, driven by Playwright.

The page paints; keys typed into it reach the app (``2`` then ``s`` start a run); closing
the tab ends its ``workbench tui`` process while the run, a process of its own, trains on;
a new tab paints again; no request leaves the machine. Screen content is checked by the
Pilot and snapshot tests; here only side effects and screenshots.

Without chromium or Playwright the test fails under CI (``CI`` set, as .ci/run sets it;
.ci/run installs Debian's chromium) and is skipped, with the reason, elsewhere.
"""

from __future__ import annotations

from tests.helpers.hub import closed_port


def test_serve_refuses_another_address_without_allow_remote(cli):
    refused = cli("serve", "--host", "0.0.0.0", "--port", str(closed_port()))
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "textual-serve has no password" in line
    assert "ssh -L" in line
