"""Weight averaging: one policy made of several policies trained on from the same checkpoint.

Policies fine-tuned from one parent for a short while (e.g. two PPO phases from the same self-play agent, one against
level-3 bots distilling a kickstart, one against level-2 bots) stay close to it in weight space, and the weighted
mean of their weights plays as a policy of its own that can keep what each of them learnt (the "model soup" of
WiSE-FT and WARP). ``average_checkpoints`` writes that mean as a playable checkpoint (weights and config, as
``export_weights`` does); whether the sources share a parent is the caller's to know (benchmarks/learning.py
checks it from the runs' records).
"""
from typing import Dict, List, Optional, Sequence

import torch

from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint


def mixing_weights(n_sources: int, weights: Optional[Sequence[float]]) -> List[float]:
    """The weight of each of ``n_sources`` sources: ``weights`` checked (one per source, >= 0, summing to 1), or
    equal weights when None."""
    if n_sources < 2:
        raise ValueError(f'weight averaging needs at least 2 checkpoints, got {n_sources}')
    if weights is None:
        return [1.0 / n_sources] * n_sources
    weights = [float(w) for w in weights]
    if len(weights) != n_sources:
        raise ValueError(f'{len(weights)} averaging weights {weights} for {n_sources} checkpoints: give one each')
    if min(weights) < 0 or abs(sum(weights) - 1.0) > 1e-6:
        raise ValueError(f'averaging weights must be >= 0 and sum to 1, got {weights} (sum {sum(weights):g})')
    return weights


def average_state_dicts(states: Sequence[Dict[str, torch.Tensor]], weights: Sequence[float],
                        names: Sequence[str]) -> Dict[str, torch.Tensor]:
    """sum_i weights[i] * states[i] for every floating-point tensor; any other tensor (an integer buffer) must be
    the same in every source and is kept. ``names`` name the sources in a CheckpointError when they do not fit."""
    first = states[0]
    for state, name in zip(states[1:], names[1:]):
        if state.keys() != first.keys():
            odd = sorted(state.keys() ^ first.keys())
            raise CheckpointError(f'{name} and {names[0]} hold different parameters ({odd[:5]}...): weights can '
                                  f'only be averaged between the same model')
        shapes = [k for k in first if state[k].shape != first[k].shape]
        if shapes:
            raise CheckpointError(f'{name} and {names[0]} differ in the shape of {shapes[:5]}: weights can only be '
                                  f'averaged between the same model')
    averaged = {}
    for key, tensor in first.items():
        if tensor.is_floating_point():
            averaged[key] = sum(w * state[key].to(torch.float64) for w, state in zip(weights, states)).to(tensor.dtype)
        elif all(torch.equal(state[key], tensor) for state in states[1:]):
            averaged[key] = tensor.clone()
        else:
            raise CheckpointError(f'{key} is not a float tensor and differs between {list(names)}: it cannot be '
                                  f'averaged')
    return averaged


def average_checkpoints(sources: Sequence[str], dst: str, weights: Optional[Sequence[float]] = None) -> List[float]:
    """Write to ``dst`` (atomically) the weighted mean of the model weights of checkpoints ``sources``, with the first
    source's config and counters: it plays the first source's games (``gobigger-eval --ckpt dst``) and cannot be
    resumed from. The sources' policy.model settings must be the same. Returns the weights used (equal by default)."""
    weights = mixing_weights(len(sources), weights)
    payloads = [load_checkpoint(path) for path in sources]
    model_cfg = payloads[0]['config']['policy']['model']
    for path, payload in zip(sources[1:], payloads[1:]):
        if payload['config']['policy']['model'] != model_cfg:
            raise CheckpointError(f'{path} has other policy.model settings than {sources[0]}: '
                                  f'{payload["config"]["policy"]["model"]} against {model_cfg}')
    model = average_state_dicts([p['model'] for p in payloads], weights, sources)
    first = payloads[0]
    save_checkpoint(dst, {'model': model}, first['train_iter'], first['envstep'], first['config'])
    return weights
