"""``workbench serve``: the workbench in a browser, over textual-serve, each tab a viewer.

Each browser tab (and each reload) starts its own ``workbench tui`` process with the flags
given here (textual-serve's web driver instead of a terminal). A run started from a tab
trains in a process of its own (:mod:`workbench.core.live.detach`), so closing the tab,
reloading it or losing the network never stops it, and a tab opened later attaches to it.

textual-serve has no authentication: whoever reaches the port gets an app that trains and
writes files. So it listens on the loopback only unless ``--allow-remote`` says otherwise,
and the way to reach a remote GPU box is an SSH tunnel (``ssh -L``), which it prints. The
page's one request off the machine (a web font) is left out. Only argparse at import.
"""

from __future__ import annotations

import argparse
import ipaddress
import shlex
import socket
import sys
from typing import TYPE_CHECKING

from workbench.cli.options import QE_FLAG, add_command, without_flags
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers

FLAGS = (
    ("--host", {"default": "127.0.0.1", "help": "address to listen on (default: 127.0.0.1)"}),
    ("--port", {"type": int, "default": 8000, "help": "port to listen on (default: 8000)"}),
    (
        "--public-url",
        {
            "metavar": "URL",
            "help": "the URL the browser reaches the server at, when it is not "
            "http://HOST:PORT (a tunnel to another local port, a proxy)",
        },
    ),
    (
        "--allow-remote",
        {
            "action": "store_true",
            "help": "listen on an address other machines reach; anyone who reaches the port "
            "can train and write files (there is no password): prefer ssh -L",
        },
    ),
)


def add_parser(subparsers: Subparsers) -> None:
    """Register ``workbench serve``, with the TUI's run flags (given to every tab)."""
    from workbench.cli.flags import add_run_options

    parser = add_command(
        subparsers,
        "serve",
        help="the full-screen workbench in a browser (pip install 'nmt-workbench[web]')",
        flags=FLAGS,
    )
    parser.add_argument(QE_FLAG[0], **QE_FLAG[1])  # the tab's, passed on as its run flags are
    add_run_options(parser)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reached from this machine only (127.0.0.0/8, ::1, localhost)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def tab_command(argv: list[str]) -> str:
    """The command each tab runs: ``workbench tui`` with the run flags ``serve`` was given."""
    kept = without_flags(argv[1:], FLAGS)  # argv[0] is "serve"
    return shlex.join([sys.executable, "-m", "workbench", "tui", *kept])


def run(args: argparse.Namespace) -> int:
    """Check the address, print how to reach it, and serve until Ctrl-C."""
    from workbench.cli.flags import config_from_args

    config_from_args(args)  # a bad flag fails here, once, not in every tab
    if args.qe:
        from workbench.core.translate.quality import QualityEstimator

        QualityEstimator(args.qe).check()
    if not is_loopback(args.host) and not args.allow_remote:
        raise WorkbenchError(
            f"--host {args.host} lets every machine that reaches port {args.port} train and "
            "write files here, and textual-serve has no password; reach it through "
            f"`ssh -L {args.port}:127.0.0.1:{args.port} {socket.gethostname()}` instead, "
            "or add --allow-remote if that network is yours alone"
        )
    try:
        from workbench.tui.web import OfflineServer
    except ImportError:
        raise WorkbenchError(
            "workbench serve needs textual-serve: pip install 'nmt-workbench[web]' "
            "(in a checkout: pip install -e '.[web]')"
        ) from None
    url = args.public_url or f"http://{args.host}:{args.port}"
    if not is_loopback(args.host):
        print(
            f"WARNING: listening on {args.host}: anyone who reaches port {args.port} can "
            "train and write files here (there is no password)",
            file=sys.stderr,
        )
    print(f"workbench in a browser: open {url}")
    print(
        f"  from another machine: ssh -L {args.port}:127.0.0.1:{args.port} "
        f"{socket.gethostname()}, then open http://127.0.0.1:{args.port}"
    )
    print("  a run started in a tab trains on when the tab closes; Ctrl-C here stops serving")
    sys.stdout.flush()
    server = OfflineServer(
        tab_command(args.argv), host=args.host, port=args.port, title="workbench",
        public_url=args.public_url,
    )  # fmt: skip
    server.serve()
    return 0
