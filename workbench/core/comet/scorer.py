"""A COMET model loaded and scoring segments: what every front end calls.

``load_scorer("Unbabel/wmt22-comet-da")`` reads the model (:mod:`.files`, :mod:`.checkpoint`,
:mod:`.network`) and the encoder's config and tokenizer, which ``hparams.yaml`` names by its
``pretrained_model`` (a Hub id, or a folder). ``scorer.score(sources, hypotheses,
references)`` gives one score per segment, equal to unbabel-comet 2.2.7's within 1e-4 in
fp32 (``tests/unit/test_comet_scores.py`` holds it to the library's own scores), and
:meth:`CometScorer.score_systems` scores several systems on the same segments, encoding
their shared sources and references once. Scores are the library's scale (about 0–1 for
COMET-22); the front ends show them ×100, as the WMT papers do.

On a GPU the encoder runs under bf16 autocast; on a CPU in fp32, as the fixtures were made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.comet.checkpoint import read_checkpoint
from workbench.core.comet.files import CometSource, locate
from workbench.core.comet.inputs import (
    SegmentTokenizer,
    SequenceBounds,
    joint_sequence,
    length_batches,
    padded,
)
from workbench.core.comet.settings import CometSettings, merged_settings, metric_name
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    import torch

    from workbench.core.comet.network import CometNetwork

#: The fast tokenizer's file, which transformers 4 read as written.
TOKENIZER_FILE = "tokenizer.json"
#: Sequences the encoder runs at once, as unbabel-comet's ``batch_size`` of 16 runs 16
#: sources, then 16 translations, then 16 references.
BATCH_SIZE = 16

#: COMET as the workbench shows it: ×100, as the WMT papers and Kocmi et al. print it
#: (0.8431 is 84.31).
SCALE = 100.0

#: ``progress(done, total)``: sequences encoded so far, of those to encode.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class SystemsToScore:
    """Several systems' translations of the same sources, and the references a model
    reads (None: it reads none): what one scoring pass encodes, each distinct text once."""

    sources: Sequence[str]
    systems: Sequence[Sequence[str]]
    references: Sequence[str] | None = None

    def texts(self) -> list[str]:
        """Each distinct text once: sources, references and every translation."""
        translations = (h for system in self.systems for h in system)
        return list(dict.fromkeys([*self.sources, *(self.references or []), *translations]))


@dataclass
class CometScorer:
    """One COMET model, ready to score; keeps each distinct sequence's vector while it
    lives, so that a second system on the same sources re-encodes only its translations."""

    name: str  # as the user named it: a Hub id or a folder
    settings: CometSettings
    network: CometNetwork
    encode: SegmentTokenizer
    device: str
    batch_size: int = BATCH_SIZE
    _vectors: dict[tuple[int, ...], torch.Tensor] = field(default_factory=dict, repr=False)

    def forget(self) -> None:
        """Let go of every sequence's vector kept so far (a long session keeps none)."""
        self._vectors.clear()

    @property
    def metric(self) -> str:
        """The metric's name as the papers give it (``COMET-22``, ``CometKiwi-22``)."""
        return metric_name(self.name, reference_free=not self.settings.reads_reference)

    @property
    def needs_reference(self) -> bool:
        """True when a reference translation is required (COMET-22); False for QE models."""
        return self.settings.needs_reference

    def score(
        self,
        sources: Sequence[str],
        hypotheses: Sequence[str],
        references: Sequence[str] | None = None,
        progress: Progress | None = None,
    ) -> list[float]:
        """One score per segment (the system score is their mean)."""
        return self.score_systems(sources, [hypotheses], references, progress)[0]

    def score_systems(
        self,
        sources: Sequence[str],
        systems: Sequence[Sequence[str]],
        references: Sequence[str] | None = None,
        progress: Progress | None = None,
    ) -> list[list[float]]:
        """Each system's segment scores, every system against the same sources and
        references; a reference is used only by a model that reads one."""
        for hypotheses in systems:
            _check_lengths(len(sources), len(hypotheses), "translations")
        if references is not None:
            _check_lengths(len(sources), len(references), "references")
        if self.settings.needs_reference and references is None:
            raise WorkbenchError(
                f"COMET model '{self.name}' scores against a reference translation; give "
                "the references, or use a reference-free (QE) model such as "
                "Unbabel/wmt22-cometkiwi-da"
            )
        if not sources:
            return [[] for _ in systems]
        refs = references if self.settings.reads_reference else None
        batch = SystemsToScore(sources, systems, refs)
        if self.settings.unified:
            return self._unified(batch, progress)
        return self._regression(batch, progress)

    # ------------------------------------------------------------------ the two classes

    def _regression(self, batch: SystemsToScore, progress: Progress | None) -> list[list[float]]:
        """Each text encoded alone, then the estimator on features of the three vectors."""
        import torch

        ids = self._ids(batch)
        self._encode(list(ids.values()), progress)
        vector = self._vectors.__getitem__

        def stack(side: Sequence[str]) -> torch.Tensor:
            return torch.stack([vector(ids[text]) for text in side])

        src = stack(batch.sources)
        ref = stack(batch.references) if batch.references is not None else None
        out = []
        with torch.inference_mode(), self._precision():
            for hypotheses in batch.systems:
                features = self.network.regression_features(src, stack(hypotheses), ref)
                out.append(self._estimate(features))
        return out

    def _unified(self, batch: SystemsToScore, progress: Progress | None) -> list[list[float]]:
        """One joint sequence per segment, scored from its first token. A model that reads
        both a source and a reference averages three inputs (mt+src, mt+ref, mt+src+ref),
        as the library's ``predict_step`` does."""
        import torch

        sides = {"src": batch.sources, "ref": batch.references}
        given = [p for p in ("src", "ref") if p in self.settings.input_segments and sides[p]]
        inputs = [("src",), ("ref",), ("src", "ref")] if len(given) == 2 else [tuple(given)]
        ids = self._ids(batch)

        def sequence(mt: str, segment: int, parts: tuple[str, ...]) -> tuple[int, ...]:
            side_ids = [ids[sides[p][segment]] for p in parts]  # type: ignore[index]
            return joint_sequence([ids[mt], *side_ids], self.encode.bounds)

        joint = [
            [[sequence(mt, i, parts) for i, mt in enumerate(hypotheses)] for parts in inputs]
            for hypotheses in batch.systems
        ]
        self._encode([s for system in joint for seqs in system for s in seqs], progress, True)
        out = []
        for per_input in joint:
            scores = torch.stack(
                [torch.cat([self._vectors[s] for s in seqs]) for seqs in per_input]
            )
            out.append([float(x) for x in scores.mean(dim=0).tolist()])
        return out

    # ------------------------------------------------------------------ the encoder

    def _ids(self, batch: SystemsToScore) -> dict[str, tuple[int, ...]]:
        """Each distinct text's token ids: sources, references and every translation."""
        texts = batch.texts()
        return dict(zip(texts, map(tuple, self.encode(texts)), strict=True))

    def _encode(
        self, sequences: list[tuple[int, ...]], progress: Progress | None, scored: bool = False
    ) -> None:
        """Vectors (or, ``scored``, the estimator's scores) of the sequences not yet seen,
        in batches of similar length."""
        import torch

        todo = [s for s in dict.fromkeys(sequences) if s not in self._vectors]
        done = 0
        for batch in length_batches(todo, self.batch_size):
            chosen = [todo[i] for i in batch]
            ids, mask = padded(chosen, self.encode.bounds.pad_id)
            with torch.inference_mode(), self._precision():
                ids_t = torch.tensor(ids, device=self.device)
                mask_t = torch.tensor(mask, device=self.device)
                vectors = self.network.embed(ids_t, mask_t)
                if scored:
                    vectors = self.network.estimate(vectors).unsqueeze(-1)
            for sequence, vector in zip(chosen, vectors.float().cpu(), strict=True):
                self._vectors[sequence] = vector
            done += len(chosen)
            if progress is not None:
                progress(done, len(todo))

    def _estimate(self, features: torch.Tensor) -> list[float]:
        """The estimator's scores of rows of features, ``batch_size`` rows at a time."""
        scores: list[float] = []
        for start in range(0, len(features), 1024):
            rows = features[start : start + 1024].to(self.device)
            scores += [float(x) for x in self.network.estimate(rows).float().cpu().tolist()]
        return scores

    def _precision(self) -> Any:
        """bf16 autocast on a GPU that has it; fp32 elsewhere."""
        from workbench.core.model.load import bf16_supported

        if self.device == "cuda" and bf16_supported():
            import torch

            return torch.autocast("cuda", dtype=torch.bfloat16)
        return nullcontext()


def points(scores: Sequence[float]) -> list[float]:
    """Segment scores on the scale the workbench shows COMET in (:data:`SCALE`)."""
    return [round(SCALE * s, 4) for s in scores]


def _check_lengths(sources: int, other: int, what: str) -> None:
    if sources != other:
        raise WorkbenchError(
            f"COMET needs one source per line of {what}: {sources:,} sources against "
            f"{other:,} {what}; give files of equal length"
        )


def load_scorer(name: str, device: str | None = None, batch_size: int = BATCH_SIZE) -> CometScorer:
    """The COMET model ``name`` (a Hub id or a folder), ready to score on ``device``
    (default: the GPU when there is one)."""
    from workbench.core.model.load import pick_device

    source = locate(name)
    source.declared_settings()  # a model not scored here: refused before its download
    checkpoint = read_checkpoint(source.checkpoint())
    settings = merged_settings(source.hparams, checkpoint.hyper_parameters, source.what)
    tokenizer, config, file = _encoder_files(source, settings)
    from workbench.core.comet.network import build_network

    network = build_network(settings, config, checkpoint.state_dict, source.what)
    device = device or pick_device()
    network.to(device)
    return CometScorer(
        name=name,
        settings=settings,
        network=network,
        encode=SegmentTokenizer(tokenizer, SequenceBounds.of(tokenizer, config), file),
        device=device,
        batch_size=batch_size,
    )


def _encoder_files(source: CometSource, settings: CometSettings) -> tuple[Any, Any, Path | None]:
    """The encoder's tokenizer and config, which the COMET model names but does not hold,
    and its ``tokenizer.json`` where it has one (:class:`SegmentTokenizer` says why)."""
    from workbench.core.model.load import load_tokenizer_and_config

    where = source.encoder_folder(settings.pretrained_model)
    tokenizer, config = load_tokenizer_and_config(where)
    return tokenizer, config, tokenizer_file(where)


def tokenizer_file(where: str) -> Path | None:
    """The encoder's ``tokenizer.json``: in its folder, or in the Hub cache, where loading
    its tokenizer has just put it if the repo has one."""
    if Path(where).is_dir():
        found = Path(where) / TOKENIZER_FILE
        return found if found.is_file() else None
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(where, TOKENIZER_FILE, local_files_only=True))
    except Exception:  # the repo has none (an encoder with a SentencePiece model alone)
        return None
