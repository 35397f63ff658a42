"""The COMET network rebuilt on plain torch and transformers 5, from its settings.

Three parts, as unbabel-comet 2.2.7 has them: the encoder (transformers' XLM-R without a
pooler, every hidden state returned), the layer mix (``layerwise_attention``: a learned
weight per hidden state, softmax- or sparsemax-normalised, each state optionally
normalised over the segment's tokens first, scaled by ``gamma``) and the estimator
(``estimator.ff``: linear layers with an activation between them). A segment's vector is
the mix pooled over its tokens; a regression model scores features of the mt, src and ref
vectors, a unified model the first token of one joint sequence. The checkpoint's weights
load under the library's own names, so a missing one is named in one line.

transformers 5 dropped the pooler from XLM-R's outputs, which is why unbabel-comet's
``last_hidden_states, _, all_layers = self.model(..., return_dict=False)`` fails there:
the outputs here are read by name.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from workbench.core.comet.settings import CometSettings
from workbench.errors import WorkbenchError


class LayerMix(nn.Module):
    """``gamma · Σ w_k · h_k`` over the encoder's hidden states (``layerwise_attention``)."""

    def __init__(self, layers: int, normalise: str, layer_norm: bool) -> None:
        super().__init__()
        self.scalar_parameters = nn.ParameterList(
            [nn.Parameter(torch.zeros(1)) for _ in range(layers)]
        )
        self.gamma = nn.Parameter(torch.ones(1))
        self.normalise = normalise
        self.layer_norm = layer_norm

    def weights(self) -> torch.Tensor:
        """Each hidden state's share of the mix (sparsemax can give some none)."""
        raw = torch.cat(list(self.scalar_parameters))
        if self.normalise == "sparsemax":
            from entmax import sparsemax

            return sparsemax(raw, dim=0)
        return torch.softmax(raw, dim=0)

    def forward(self, states: tuple[torch.Tensor, ...], mask: torch.Tensor) -> torch.Tensor:
        """The mix of ``states`` (each batch × tokens × width) for the tokens in ``mask``."""
        weights = self.weights()
        if not self.layer_norm:
            return self.gamma * sum(w * s for w, s in zip(weights, states, strict=True))
        mask_float = mask.float()
        broadcast = mask_float.unsqueeze(-1)
        # unbabel-comet's normalisation: one mean and variance per segment, over every
        # (token, unit) inside the mask; applied to the padded positions too, which the
        # pooling then drops.
        count = mask_float.sum(1) * states[0].size(-1)
        pieces = []
        for weight, state in zip(weights, states, strict=True):
            batch = state.size(0)
            masked = state * broadcast
            mean = (masked.view(batch, -1).sum(1) / count).view(batch, 1, 1)
            variance = (((masked - mean) * broadcast) ** 2).view(batch, -1).sum(1) / count
            normalised = (state - mean) / torch.sqrt(variance + 1e-12).view(batch, 1, 1)
            pieces.append(weight * normalised)
        return self.gamma * sum(pieces)


def _activation(name: str, where: str) -> nn.Module:
    """``torch.nn``'s module of that name as unbabel-comet spells it (``name.title()``)."""
    module = getattr(nn, name.title(), None)
    if not isinstance(module, type) or not issubclass(module, nn.Module):
        raise WorkbenchError(
            f"{where} names the activation {name!r}, which torch.nn has no module "
            f"{name.title()!r} for; check its hparams.yaml"
        )
    return module()


class _Holder(nn.Module):
    """A module under one name, so the weights are named as the checkpoint names them
    (``encoder.model.*``, ``estimator.ff.*``)."""

    def __init__(self, name: str, module: nn.Module) -> None:
        super().__init__()
        self.add_module(name, module)
        self.name = name

    @property
    def held(self) -> Any:
        """The module held."""
        return self._modules[self.name]


class CometNetwork(nn.Module):
    """A COMET model: encoder, layer mix and estimator, under the checkpoint's own names."""

    def __init__(self, settings: CometSettings, encoder: Any, where: str) -> None:
        super().__init__()
        self.settings = settings
        self.encoder = _Holder("model", encoder)
        config: Any = encoder.config
        self.hidden_states = int(config.num_hidden_layers) + 1  # embeddings, then each layer
        self.pad_id = int(config.pad_token_id)
        if isinstance(settings.layer, int) and settings.layer >= self.hidden_states:
            raise WorkbenchError(
                f"{where} reads hidden state {settings.layer}, but its encoder has "
                f"{self.hidden_states} (0–{self.hidden_states - 1}); check its hparams.yaml"
            )
        self.layerwise_attention = (
            LayerMix(self.hidden_states, settings.mix, settings.layer_norm)
            if settings.layer == "mix"
            else None
        )
        width = int(config.hidden_size)
        features = width if settings.unified else width * len(settings.input_segments) * 2
        layers: list[nn.Module] = []
        for size in settings.hidden_sizes:
            layers += [nn.Linear(features, size), _activation(settings.activations, where)]
            layers.append(nn.Identity())  # its dropout: keeps the library's ff.0, ff.3, ff.6
            features = size
        layers.append(nn.Linear(features, 1))
        if settings.final_activation is not None:
            layers.append(_activation(settings.final_activation, where))
        self.estimator = _Holder("ff", nn.Sequential(*layers))

    def embed(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """One vector per sequence of the batch: the mix (or one state), pooled."""
        out = self.encoder.held(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        pool = self.settings.pool
        if pool == "default":  # the encoder's own sentence vector: the last state's first token
            return out.last_hidden_state[:, 0, :]
        states = out.hidden_states
        if self.layerwise_attention is not None:
            mixed = self.layerwise_attention(states, mask)
        else:
            assert isinstance(self.settings.layer, int)
            mixed = states[self.settings.layer]
        if pool == "cls":
            return mixed[:, 0, :]
        padding = ids.eq(self.pad_id).unsqueeze(-1)
        if pool == "max":
            return mixed.float().masked_fill(padding, float("-inf")).type_as(mixed).max(dim=1)[0]
        summed = mixed.float().masked_fill(padding, 0.0).type_as(mixed).sum(1)
        return summed / mask.unsqueeze(-1).expand(mixed.size()).float().sum(1)

    def estimate(self, features: torch.Tensor) -> torch.Tensor:
        """The estimator's score of each row of ``features``."""
        layers = self.estimator.held
        return layers(features.to(layers[0].weight.dtype)).view(-1)

    def regression_features(
        self, src: torch.Tensor, mt: torch.Tensor, ref: torch.Tensor | None
    ) -> torch.Tensor:
        """The regression estimator's input, in the library's order: with a reference
        ``[mt, ref, mt·ref, |mt−ref|, mt·src, |mt−src|]``, without ``[mt, src, mt·src,
        |mt−src|]``."""
        if ref is None:
            return torch.cat((mt, src, mt * src, torch.abs(mt - src)), dim=1)
        return torch.cat(
            (mt, ref, mt * ref, torch.abs(mt - ref), mt * src, torch.abs(mt - src)), dim=1
        )

    def load_weights(self, state_dict: dict[str, Any], where: str) -> None:
        """The checkpoint's tensors into this network; one line naming a missing one."""
        # Keys no score reads are left out: the encoder's old position-id buffer, the mix's
        # dropout buffers, a unified model's word-level head.
        wanted = set(self.state_dict())
        kept = {k: v for k, v in state_dict.items() if k in wanted}
        missing = sorted(wanted - set(kept))
        if missing:
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            raise WorkbenchError(
                f"{where}'s checkpoint lacks the weight {missing[0]!r}{more}, so it does not "
                "match its hparams.yaml; download the model again"
            )
        # As the library copies into its fp32 parameters: an fp16 checkpoint scores in fp32.
        weights = {k: v.float() if v.is_floating_point() else v for k, v in kept.items()}
        try:
            self.load_state_dict({k: weights[k] for k in wanted}, strict=True, assign=True)
        except RuntimeError as err:
            reason = " ".join(str(err).split())[:160]
            raise WorkbenchError(
                f"{where}'s checkpoint does not fit its hparams.yaml and encoder config "
                f"({reason}); download the model again"
            ) from None


def build_network(
    settings: CometSettings,
    encoder_config: Any,
    state_dict: dict[str, Any],
    where: str,
) -> CometNetwork:
    """The network of ``settings`` with the checkpoint's weights, built on the meta device
    so that no random initialisation is computed and no weight is held twice."""
    from transformers import XLMRobertaModel

    with torch.device("meta"):
        encoder = XLMRobertaModel(encoder_config, add_pooling_layer=False)
        network = CometNetwork(settings, encoder, where)
    network.load_weights(state_dict, where)
    network.requires_grad_(False)  # a metric: scored, never trained
    embeddings = encoder.embeddings
    # transformers' buffers that are not in any checkpoint (persistent=False), rebuilt as
    # its constructor makes them: position ids 0…n−1 and token-type ids 0.
    positions = int(encoder_config.max_position_embeddings)
    embeddings.position_ids = nn.Buffer(torch.arange(positions).expand((1, -1)), persistent=False)
    embeddings.token_type_ids = nn.Buffer(
        torch.zeros((1, positions), dtype=torch.long), persistent=False
    )
    left = [name for name, tensor in network.named_buffers() if tensor.is_meta]
    assert not left, f"buffers left without values: {left}"
    return network.eval()
