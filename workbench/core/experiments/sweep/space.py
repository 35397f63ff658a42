"""What a sweep varies: ``--grid`` and ``--search`` specs read into checked dimensions.

Every value is coerced and validated by the run configuration itself (``build_config``)
before any study is opened, so ``--grid lr=abc`` or ``--search epochs=uniform:0:5`` fails
in milliseconds with the value and the fix, not after the first trial's model is built.
No Optuna here: the specs are plain data, turned into Optuna calls by ``sweep``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from workbench.core.config.build import FIELD_NAMES, build_config
from workbench.core.config.run_config import RunConfig
from workbench.core.config.settings import setting_value
from workbench.errors import WorkbenchError

#: Short names users type for the settings swept most (the flags of ``workbench train``).
ALIASES = {
    "lr": "learning_rate",
    "bs": "batch_size",
    "batch": "batch_size",
    "warmup": "warmup_ratio",
    "smoothing": "label_smoothing",
    "rank": "lora_rank",
    "alpha": "lora_alpha",
}
#: The short name shown for a setting in progress lines (the inverse of the main aliases).
SHORT_NAMES = {"learning_rate": "lr"}
#: Settings a sweep cannot vary: they say where and what the sweep is, not a recipe.
NOT_SWEPT = ("preset", "output_dir")
#: ``--search`` kinds: a float range, a float range sampled on a log scale, whole numbers,
#: or a list of values.
SEARCH_KINDS = ("uniform", "loguniform", "int", "choice")

Mode = Literal["grid", "search"]


@dataclass(frozen=True)
class Dimension:
    """One swept setting: grid or choice ``values``, or a ``(low, high)`` range."""

    name: str  # a RunConfig field
    kind: str  # "grid" or one of SEARCH_KINDS
    values: tuple[Any, ...]

    def spec(self) -> str:
        """The dimension as the user would write it (canonical, for names and checks)."""
        values = [setting_value(v) for v in self.values]
        if self.kind == "grid":
            return f"{self.name}={','.join(values)}"
        if self.kind == "choice":
            return f"{self.name}=choice:{','.join(values)}"
        return f"{self.name}={self.kind}:{values[0]}:{values[1]}"


@dataclass(frozen=True)
class SweepSpace:
    """The settings a sweep varies, on a grid or searched (Optuna's TPE)."""

    mode: Mode
    dimensions: tuple[Dimension, ...]

    def grid_points(self) -> list[dict[str, Any]]:
        """Every combination of a grid's values, in the order given."""
        names = [d.name for d in self.dimensions]
        return [
            dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(d.values for d in self.dimensions))
        ]

    def spec(self) -> str:
        """One line naming the mode and every dimension (stored in the study to check that
        a rerun asks for the same sweep)."""
        return f"{self.mode} " + " ".join(d.spec() for d in self.dimensions)


def setting_name(text: str, flag: str, spec: str) -> str:
    """The RunConfig field a ``--grid``/``--search`` name means (aliases, dashes allowed)."""
    name = ALIASES.get(text.strip(), text.strip().replace("-", "_"))
    if name in NOT_SWEPT:
        raise WorkbenchError(
            f"{flag} '{spec}': {name} cannot be swept; pass it once as --{name.replace('_', '-')}"
        )
    if name not in FIELD_NAMES:
        raise WorkbenchError(
            f"{flag} '{spec}': unknown setting '{text}'; use lr, epochs, batch_size, "
            "warmup_ratio, label_smoothing or any name `workbench presets demo` lists"
        )
    return name


def checked_value(base: RunConfig, name: str, value: Any, flag: str, spec: str) -> Any:
    """``value`` as the run will use it (coerced and validated by the run config)."""
    try:
        config = build_config(base.preset, overrides={**base.to_dict(), name: value})
    except WorkbenchError as err:
        raise WorkbenchError(f"{flag} '{spec}': {err}") from None
    return getattr(config, name)


def _split(spec: str, flag: str, example: str) -> tuple[str, str]:
    name, sep, values = spec.partition("=")
    if not sep or not name.strip() or not values.strip():
        raise WorkbenchError(f"{flag} takes NAME=VALUES, got '{spec}'; e.g. {flag} {example}")
    return name, values


def grid_dimension(base: RunConfig, spec: str) -> Dimension:
    """``name=v1,v2,...``: every value is run (duplicates once)."""
    text, values = _split(spec, "--grid", "lr=5e-4,1e-3")
    name = setting_name(text, "--grid", spec)
    parsed = [
        checked_value(base, name, v.strip(), "--grid", spec) for v in values.split(",") if v.strip()
    ]
    return Dimension(name, "grid", tuple(dict.fromkeys(parsed)))


def search_dimension(base: RunConfig, spec: str) -> Dimension:
    """``name=kind:low:high`` or ``name=choice:a,b``: a range (or list) TPE samples from."""
    text, rest = _split(spec, "--search", "lr=loguniform:1e-5:1e-3")
    name = setting_name(text, "--search", spec)
    kind, _, bounds = rest.partition(":")
    kind = kind.strip().lower()
    if kind not in SEARCH_KINDS:
        raise WorkbenchError(
            f"--search '{spec}': unknown kind '{kind}'; write {text}=loguniform:LOW:HIGH, "
            f"uniform:LOW:HIGH, int:LOW:HIGH or choice:A,B,..."
        )
    if kind == "choice":
        choices = [
            checked_value(base, name, v.strip(), "--search", spec)
            for v in bounds.split(",")
            if v.strip()
        ]
        if len(set(choices)) < 2:
            raise WorkbenchError(
                f"--search '{spec}': choice needs two values or more, e.g. {text}=choice:16,32"
            )
        return Dimension(name, kind, tuple(dict.fromkeys(choices)))
    parts = bounds.split(":")
    if len(parts) != 2:
        raise WorkbenchError(
            f"--search '{spec}': {kind} takes LOW:HIGH, e.g. "
            f"{text}={kind}:{'2:10' if kind == 'int' else '1e-5:1e-3'}"
        )
    field_type = type(getattr(base, name))
    if kind != "int" and field_type is int:
        raise WorkbenchError(
            f"--search '{spec}': {name} is a whole number; write "
            f"{text}=int:LOW:HIGH or {text}=choice:A,B"
        )
    if field_type not in (int, float):
        raise WorkbenchError(f"--search '{spec}': {name} is not a number; write {text}=choice:A,B")
    low, high = (checked_value(base, name, p.strip(), "--search", spec) for p in parts)
    if kind == "int" and not (float(low).is_integer() and float(high).is_integer()):
        raise WorkbenchError(f"--search '{spec}': int takes whole numbers, got {low}:{high}")
    if not low < high:
        raise WorkbenchError(f"--search '{spec}': LOW must be below HIGH, got {low}:{high}")
    if kind == "int":
        low, high = int(low), int(high)
    return Dimension(name, kind, (low, high))


def parse_space(base: RunConfig, grid: list[str], search: list[str]) -> SweepSpace:
    """The sweep ``--grid`` or ``--search`` specs describe, checked against ``base``."""
    if grid and search:
        raise WorkbenchError(
            "use --grid or --search, not both: a grid runs every "
            "combination, a search samples --trials of them"
        )
    if not grid and not search:
        raise WorkbenchError(
            "say what to sweep: --grid epochs=2,4 (every value) or "
            "--search lr=loguniform:1e-5:1e-3 --trials 8"
        )
    dims = (
        [grid_dimension(base, s) for s in grid]
        if grid
        else [search_dimension(base, s) for s in search]
    )
    seen: set[str] = set()
    for d in dims:
        if d.name in seen:
            raise WorkbenchError(
                f"{d.name} is swept twice; give each setting once (--grid {d.name}=A,B)"
            )
        seen.add(d.name)
    return SweepSpace("grid" if grid else "search", tuple(dims))


#: Settings left out of a sweep's default name: they do not change what a trial trains.
NOT_IN_NAME = ("output_dir", "data_revision")


def default_name(base: RunConfig, space: SweepSpace) -> str:
    """A name that the same command always gives again, so a rerun finds its study.

    Readable (preset and swept settings) plus a hash of the sweep and of every base
    setting, so that another grid, or the same grid over other settings, is another study.
    ``--trials`` is not in it: raising it continues a search.
    """
    settings = {k: v for k, v in base.to_dict().items() if k not in NOT_IN_NAME}
    digest = hashlib.sha256(
        json.dumps([space.spec(), settings], sort_keys=True, default=str).encode()
    ).hexdigest()[:8]
    names = "-".join(SHORT_NAMES.get(d.name, d.name) for d in space.dimensions)
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{base.preset}-{names}-{digest}")


def point_text(params: dict[str, Any]) -> str:
    """A trial's settings as ``epochs=4 lr=0.001827`` (a search's draws to 4 digits)."""
    return " ".join(
        f"{SHORT_NAMES.get(k, k)}=" + (format(v, ".4g") if isinstance(v, float) else str(v))
        for k, v in params.items()
    )


def point_key(params: dict[str, Any]) -> str:
    """The identity of a point in the study (a trial and its retries share it)."""
    return json.dumps(params, sort_keys=True)
