"""Learner: runs the policy's learn mode on each rollout, counts updates, saves and restores checkpoints.

DI-engine's BaseLearner counts one iteration per minibatch as we do, but its checkpoints are not written
atomically and do not carry the value-norm statistics; this one does both, with the same file names.
"""
import json
import logging
import os
import time
from typing import Any, Dict, Optional, Tuple

from ..play.evaluator import selection_key
from ..threads import torch_threads
from .checkpoint import CheckpointError, check_model_state, save_checkpoint


class Learner:

    def __init__(self, policy, model, exp_dir: str, config: Dict, write_log: bool = True) -> None:
        """
        Arguments:
            policy: the policy's learn_mode.
            model: the model it trains (checked against a checkpoint's parameters on resume).
            exp_dir: experiment folder; checkpoints go to exp_dir/ckpt, the per-iteration log to exp_dir/learner.jsonl.
            config: the compiled main_config, stored in every checkpoint.
            write_log: write learner.jsonl (under torchrun, rank 0 alone does).
        """
        self._learn = policy
        self._model = model
        self._config = config
        self.ckpt_dir = os.path.join(exp_dir, 'ckpt')
        self._log_path = os.path.join(exp_dir, 'learner.jsonl') if write_log else None
        self.train_iter = 0  # gradient updates so far
        self.best: Optional[Tuple[float, float]] = None  # selection_key of the best evaluation so far

    def train(self, rollout: Dict[str, Any], envstep: int, collector_info: Dict) -> Dict[str, float]:
        """One PPO iteration; ``envstep`` is the env steps collected after the rollout (logged)."""
        start = time.time()
        with torch_threads(self._config.policy.learn.torch_threads):
            stats = self._learn.forward(rollout)
        learn_time = time.time() - start
        self.train_iter += stats['update_count']
        self.log(dict(envstep=envstep, **stats, **collector_info, learn_time=learn_time))
        return stats

    def log(self, record: Dict[str, Any]) -> None:
        """Append one line to learner.jsonl: the gradient updates so far, then ``record`` (rank 0 only)."""
        if self._log_path is None:
            return
        with open(self._log_path, 'a') as f:
            f.write(json.dumps({'train_iter': self.train_iter, **record}) + '\n')

    def save(self, envstep: int, extra: Dict[str, Any], name: Optional[str] = None) -> str:
        """Checkpoint the learn state, the counters and ``extra`` (what else a resumed run restores)."""
        path = os.path.join(self.ckpt_dir, name or f'iteration_{self.train_iter}.pth.tar')
        state = {**self._learn.state_dict(), **extra, 'best_eval': list(self.best) if self.best else None}
        save_checkpoint(path, state, self.train_iter, envstep, self._config)
        return path

    def save_if_best(self, report: Dict[str, Any], envstep: int, extra: Dict[str, Any]) -> bool:
        """Save ckpt_best.pth.tar when the evaluator's ``report`` beats the best so far (evaluator.selection_key:
        the win rate, ties by the median score ratio); True when it did."""
        key = selection_key(report)
        if self.best is None or key > self.best:
            self.best = key
            self.save(envstep, extra, 'ckpt_best.pth.tar')
            return True
        return False

    def restore(self, payload: Dict[str, Any], path: str) -> None:
        """Restore model, optimizer, value-norm statistics and counters from a loaded checkpoint."""
        check_model_state(self._model, payload['model'], path)
        try:
            self._learn.load_state_dict(payload)
        except ValueError as e:  # the policy says what the checkpoint lacks for this config
            raise CheckpointError(f'{path}: {e}') from e
        self.train_iter = payload['train_iter']
        best = payload.get('best_eval')  # checkpoints from before it kept a best reward_mean: not comparable
        self.best = tuple(best) if best else None
        logging.info(f'resumed from {path}: train_iter {self.train_iter}, envstep {payload["envstep"]}')
