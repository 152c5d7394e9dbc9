"""Checkpoints: written atomically, read as data only (torch.load with weights_only=True).

A checkpoint holds the policy's learn state (model, optimizer, value-norm statistics), the counters
(train_iter, envstep) and the config (as JSON text, so that loading never executes code from the file).
"""
import json
import os
import random
from typing import Any, Dict

import numpy as np
import torch

from ...files import replaced_atomically

CKPT_FORMAT = 'ppo_gobigger/1'  # bumped when the layout below changes


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, truncated, foreign or does not fit the model."""


def rng_state() -> Dict[str, Any]:
    """The random generators a run draws from (python, numpy, torch, CUDA), as plain data."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    state = {
        'python': random.getstate(),
        'numpy': {'keys': torch.from_numpy(keys.astype(np.int64)), 'pos': pos, 'has_gauss': has_gauss, 'gauss': gauss},
        'torch': torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state['cuda'] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: Dict[str, Any]) -> None:
    version, internal, gauss = state['python']
    random.setstate((version, tuple(internal), gauss))
    n = state['numpy']
    np.random.set_state(('MT19937', n['keys'].numpy().astype(np.uint32), n['pos'], n['has_gauss'], n['gauss']))
    torch.set_rng_state(state['torch'])
    if 'cuda' in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state['cuda'])


def save_checkpoint(path: str, state: Dict[str, Any], train_iter: int, envstep: int, config: Dict) -> None:
    """Write to a temporary file in the same folder, fsync, then rename over ``path``: never a half file.

    ``state`` holds the policy's learn state and anything else to restore (plain data and tensors only).
    """
    payload = {
        'format': CKPT_FORMAT,
        'train_iter': int(train_iter),
        'envstep': int(envstep),
        'config': json.dumps(config, default=str),
        **state,
    }
    with replaced_atomically(path) as tmp:
        with open(tmp, 'wb') as f:
            torch.save(payload, f)
            f.flush()
            os.fsync(f.fileno())  # on disk before the rename: a crash right after it still leaves a whole file


def load_checkpoint(path: str, map_location: str = 'cpu') -> Dict[str, Any]:
    """Read and check a checkpoint; its 'config' comes back as a dict. Raises CheckpointError naming the problem."""
    if not os.path.isfile(path):
        raise CheckpointError(f'checkpoint not found: {path}')
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as e:  # truncated zip, not a torch file, or a pickle that is not plain data
        raise CheckpointError(f'cannot read checkpoint {path} (truncated, corrupt or not a checkpoint): {e}') from e
    if not isinstance(payload, dict) or payload.get('format') != CKPT_FORMAT:
        found = payload.get('format') if isinstance(payload, dict) else type(payload).__name__
        raise CheckpointError(f'{path} is not a ppo_gobigger checkpoint (format {found!r}, expected {CKPT_FORMAT!r})')
    payload['config'] = json.loads(payload['config'])
    return payload


def check_model_state(model: torch.nn.Module, state_dict: Dict[str, torch.Tensor], path: str) -> None:
    """Raise CheckpointError listing missing, unexpected and mis-shaped parameters, if any."""
    own = model.state_dict()
    missing = sorted(set(own) - set(state_dict))
    unexpected = sorted(set(state_dict) - set(own))
    mismatched = [
        f'{k}: checkpoint {tuple(state_dict[k].shape)} vs model {tuple(own[k].shape)}'
        for k in sorted(set(own) & set(state_dict)) if own[k].shape != state_dict[k].shape
    ]
    if missing or unexpected or mismatched:
        lines = [f'checkpoint {path} does not fit the model (different policy.model settings?):']
        if mismatched:
            lines.append('  mismatched shapes: ' + '; '.join(mismatched))
        if missing:
            lines.append('  missing parameters: ' + ', '.join(missing))
        if unexpected:
            lines.append('  unexpected parameters: ' + ', '.join(unexpected))
        raise CheckpointError('\n'.join(lines))


def export_weights(src: str, dst: str) -> None:
    """Write the playable part of checkpoint ``src`` to ``dst``: the model's weights, the config and the counters,
    nothing else (no optimizer, value-norm statistics or random-generator states), atomically. ``gobigger-eval
    --ckpt dst`` replays it with no other file; it cannot be resumed from."""
    payload = load_checkpoint(src)
    save_checkpoint(dst, {'model': payload['model']}, payload['train_iter'], payload['envstep'], payload['config'])
