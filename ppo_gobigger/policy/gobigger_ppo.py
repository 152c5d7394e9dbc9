"""Multi-agent PPO for GoBigger in DI-engine's policy form (learn / collect / eval modes).

The A players of our team share one policy. Each player has its own value (B, A) from a centralised critic, so
the probability ratio is clipped per player (MAPPO), never averaged over players first.

Shapes: T = rollout length per env, E = envs, A = players per team, N = actions, M = minibatch (env steps).
"""
import logging
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch
from easydict import EasyDict
from torch.distributions import Categorical

from ding.policy import Policy
from ding.utils import POLICY_REGISTRY

from ..envs.actions import ACTION_KINDS, ACTION_NUM
from .collective import average_gradients, pooled_moments
from .inference import acting, stack_obs
from .ppo_math import ValueNorm, explained_variance, gae, group_entropy, policy_loss, value_loss


# what each minibatch update reports; learn returns their means over an iteration
UPDATE_STATS = ('policy_loss', 'value_loss', 'entropy', 'kind_entropy', 'total_loss', 'approx_kl', 'clipfrac',
                'grad_norm')
# What DI-engine's Policy.__init__ and serial entries read, fixed for this policy: not user config keys
# (config.default_config leaves them out). multi_gpu stays off: torchrun ranks average their gradients in
# _apply_update (policy/collective.py).
DING_FIXED = dict(on_policy=True, multi_gpu=False, bp_update_sync=True, traj_len_inf=False)
DING_FIXED_LEARN = dict(resume_training=False)
MAX_NONFINITE_UPDATES = 10  # updates in a row with a NaN/inf loss or gradient (each skipped) before training stops


class NonFiniteLossError(RuntimeError):
    """Too many PPO updates in a row had a NaN or inf loss or gradient."""


@dataclass
class Samples:
    """A rollout's valid env steps, time and envs flattened: S samples of the A players of a team."""
    obs: Dict[str, torch.Tensor]  # {key: (S, A, ...)}
    action: torch.Tensor  # (S, A)
    old_logp: torch.Tensor  # (S, A) log-probability of the action under the policy that collected it
    advantage: torch.Tensor  # (S, A) GAE, in return units
    old_value: torch.Tensor  # (S, A) the collected value, in the critic's (normalised) units
    target: torch.Tensor  # (S, A) the return, in the critic's units

    def __len__(self) -> int:
        return len(self.action)

    def __getitem__(self, idx: torch.Tensor) -> 'Samples':
        """The minibatch of the samples at ``idx`` (M,)."""
        return Samples({k: v[idx] for k, v in self.obs.items()}, self.action[idx], self.old_logp[idx],
                       self.advantage[idx], self.old_value[idx], self.target[idx])


@POLICY_REGISTRY.register('gobigger_ppo')
class GoBiggerPPOPolicy(Policy):
    """PPO with GAE, value normalisation, clipped policy and value losses and an entropy bonus."""

    config = dict(
        type='gobigger_ppo',
        # (bool) Use CUDA for the learner (and inference) when a GPU is available.
        cuda=False,
        # (int) torch threads while the envs run and the policy acts (training, gobigger-eval, gobigger-league); env
        # processes use one each.
        torch_threads=1,
        # (dict) Keyword arguments of GoBiggerPPOModel.
        model=dict(),
        # (str or None) A new run starts from the model weights of this checkpoint (a published one included; its
        # policy.model settings must match), e.g. an st_t2p2 team fine-tuned on another preset. Optimizer,
        # value-norm statistics and counters start fresh; --resume takes its own checkpoint's. None: random weights.
        load_path=None,
        learn=dict(
            # (int) Passes over each rollout.
            epoch_per_collect=4,
            # (int) Minibatch size in env steps (each holds A players): 8 minibatches of a 3,600-step rollout.
            batch_size=450,
            # (float) Adam learning rate.
            learning_rate=1e-3,
            # (float) Weight of the value loss.
            value_weight=0.5,
            # (float) Weight of the entropy bonus.
            entropy_weight=0.005,
            # (float) PPO clip range of the probability ratio, and of the value around the collected value.
            clip_ratio=0.2,
            # (float) Clip of the global gradient norm.
            grad_clip=0.5,
            # (int or None) torch threads while learning, when the envs wait; None: one per core (under torchrun:
            # the machine's cores shared among its ranks).
            torch_threads=None,
            # (float) Discount factor per decision: a horizon of ~200 decisions (80 s of a 180 s st_t2p2 game).
            discount_factor=0.995,
            # (float) GAE lambda: advantages that lean on the near future while the critic is still poor.
            gae_lambda=0.8,
        ),
        collect=dict(
            # (int) Env steps collected per training iteration, over all collector envs: one whole st_t2p2 game
            # (450 decisions) per env of 8.
            n_sample=3600,
        ),
        eval=dict(
            # (bool) Sample actions in evaluation instead of taking the most likely one.
            sample=False,
            evaluator=dict(
                # (int) Evaluate every this many collected env steps (and once before training).
                eval_freq=36_000,
            ),
        ),
    )

    def __init__(self, cfg: EasyDict, model: Optional[torch.nn.Module] = None,
                 enable_field: Optional[List[str]] = None) -> None:
        cfg = EasyDict({**DING_FIXED, **cfg})
        cfg.learn = EasyDict({**DING_FIXED_LEARN, **cfg.get('learn', {})})
        super().__init__(cfg, model, enable_field)

    def default_model(self):
        return 'gobigger_ppo', ['ppo_gobigger.model.gobigger_ppo_model']

    # ------------------------------------------------------------------ learn
    def _init_learn(self) -> None:
        cfg = self._cfg.learn
        self._learn_model = self._model
        if self._cuda:  # DI-engine says cuda:0; the model is on the current device (under torchrun, the rank's GPU)
            self._device = f'cuda:{torch.cuda.current_device()}'
        self._optimizer = torch.optim.Adam(self._model.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self._value_norm = ValueNorm().to(self._device)
        self._nonfinite_streak = 0  # NaN/inf updates in a row
        self._skipped_updates = 0  # NaN/inf updates in all

    def _forward_learn(self, rollout: Dict[str, Any]) -> Dict[str, float]:
        """One PPO iteration on one rollout; returns the mean of each logged quantity over the updates applied.

        rollout (from the collector; tensors, time-first):
            obs: {key: (T, E, A, ...)}, action: (T, E, A), logit: (T, E, A, N),
            value: (T, E, A) and next_value: (T, E, A) as the critic predicted them (normalised units),
            reward: (T, E, A), done: (T, E), cut: (T, E),
            valid: (T, E) False where an env's segment is padded (async managers; a team that sat out games).
        """
        cfg = self._cfg.learn
        rollout = {k: ({o: x.to(self._device) for o, x in v.items()} if k == 'obs' else v.to(self._device))
                   for k, v in rollout.items()}
        samples, ev = self._samples(rollout)
        if samples is None:  # a NaN/inf reward or value: the rollout is dropped
            return self._result({}, ev)
        self._learn_model.train()
        stats: Dict[str, List[float]] = {}
        for _ in range(cfg.epoch_per_collect):
            for idx in torch.randperm(len(samples), device=self._device).split(cfg.batch_size):  # (M,) each
                loss, terms = self.minibatch_loss(samples[idx])
                grad_norm = self._apply_update(loss)
                if grad_norm is None:
                    continue
                for name, x in {**terms, 'total_loss': loss, 'grad_norm': grad_norm}.items():
                    stats.setdefault(name, []).append(float(x.detach()))
        return self._result(stats, ev)

    @torch.no_grad()
    def _samples(self, rollout: Dict[str, Any]) -> Tuple[Optional[Samples], float]:
        """The rollout's advantages and returns (GAE on the critic's denormalised values), the value-norm statistics
        updated with the returns, and the valid steps flattened; (None, nan) when a return is not finite.
        Also the explained variance of the returns by the collected values."""
        cfg = self._cfg.learn
        valid = rollout['valid']  # (T, E)
        value = self._value_norm.denormalize(rollout['value'])  # (T, E, A) return units
        next_value = self._value_norm.denormalize(rollout['next_value'])  # (T, E, A)
        advantage = gae(rollout['reward'], value, next_value, rollout['done'], rollout['cut'], cfg.discount_factor,
                        cfg.gae_lambda)  # (T, E, A)
        returns = advantage + value  # (T, E, A)
        if not torch.isfinite(returns[valid]).all():
            self._skip_nonfinite_update(returns.sum(), torch.tensor(float('nan')))
            return None, float('nan')
        ev = explained_variance(value[valid].flatten(), returns[valid].flatten())
        self._value_norm.update_moments(*pooled_moments(returns[valid]))  # under torchrun: every rank's returns
        old_logp = Categorical(logits=rollout['logit']).log_prob(rollout['action'])  # (T, E, A)

        T, E = valid.shape
        keep = valid.reshape(T * E)  # (T * E,)
        flat = lambda x: x.reshape(T * E, *x.shape[2:])[keep]  # noqa: E731  (T, E, ...) -> (S, ...)
        samples = Samples({k: flat(v) for k, v in rollout['obs'].items()}, flat(rollout['action']), flat(old_logp),
                          flat(advantage), flat(self._value_norm.normalize(value)),
                          flat(self._value_norm.normalize(returns)))
        return samples, ev

    def minibatch_loss(self, mb: Samples) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
        """The PPO loss of one minibatch of M samples, and its terms to log (scalars). A subclass adds a loss
        term here: ``loss, terms = super().minibatch_loss(mb)``, then its own."""
        cfg = self._cfg.learn
        out = self._learn_model(mb.obs, mode='compute_actor_critic')  # logit (M, A, N), value (M, A)
        dist = Categorical(logits=out['logit'])  # batch shape (M, A)
        adv = (mb.advantage - mb.advantage.mean()) / (mb.advantage.std() + 1e-8)  # (M, A) normalised per minibatch
        pl = policy_loss(dist.log_prob(mb.action), mb.old_logp, adv, cfg.clip_ratio)
        vl = value_loss(out['value'], mb.old_value, mb.target, cfg.clip_ratio)
        entropy = dist.entropy().mean()
        loss = pl['loss'] + cfg.value_weight * vl - cfg.entropy_weight * entropy
        terms = {'policy_loss': pl['loss'], 'value_loss': vl, 'entropy': entropy, 'approx_kl': pl['approx_kl'],
                 'clipfrac': pl['clipfrac']}
        if out['logit'].shape[-1] == ACTION_NUM:  # logged, not learnt: the entropy of move / eject / split
            with torch.no_grad():
                terms['kind_entropy'] = group_entropy(out['logit'], ACTION_KINDS).mean()
        return loss, terms

    def _apply_update(self, loss: torch.Tensor) -> Optional[torch.Tensor]:
        """Backward, the gradients averaged over torchrun ranks, clipped, then one Adam step; returns the gradient
        norm before clipping, or None when the loss or gradient was not finite (the update is skipped)."""
        self._optimizer.zero_grad()
        loss.backward()
        # under torchrun: every rank's mean gradient before clipping, so a NaN/inf of one rank makes all skip
        average_gradients(self._learn_model.parameters())
        grad_norm = torch.nn.utils.clip_grad_norm_(self._learn_model.parameters(), self._cfg.learn.grad_clip)
        if not (torch.isfinite(loss) and torch.isfinite(grad_norm)):
            self._skip_nonfinite_update(loss, grad_norm)
            return None
        self._nonfinite_streak = 0
        self._optimizer.step()
        return grad_norm

    def _skip_nonfinite_update(self, loss: torch.Tensor, grad_norm: torch.Tensor) -> None:
        """Drop this update's gradient; stop training after MAX_NONFINITE_UPDATES in a row."""
        self._optimizer.zero_grad()
        self._nonfinite_streak += 1
        self._skipped_updates += 1
        logging.warning(f'skipped an update with a non-finite loss ({float(loss):.4g}) or gradient norm '
                        f'({float(grad_norm):.4g}); {self._nonfinite_streak} in a row (training stops at '
                        f'{MAX_NONFINITE_UPDATES})')
        if self._nonfinite_streak >= MAX_NONFINITE_UPDATES:
            raise NonFiniteLossError(f'{self._nonfinite_streak} updates in a row had a NaN/inf loss or gradient; '
                                     'stopping. The checkpoints written so far hold the last good parameters.')

    def _result(self, stats: Dict[str, List[float]], ev: float) -> Dict[str, float]:
        """Mean of each logged quantity over the updates applied (nan when every update was skipped), a subclass's
        own terms of minibatch_loss included."""
        result = {k: float(np.mean(stats[k])) if k in stats else float('nan') for k in UPDATE_STATS}
        result.update({k: float(np.mean(v)) for k, v in stats.items() if k not in UPDATE_STATS})
        result.update(
            explained_variance=ev,
            cur_lr=self._optimizer.param_groups[0]['lr'],
            update_count=len(stats.get('total_loss', [])),  # updates applied (skipped ones excluded)
            skipped_updates=self._skipped_updates,  # NaN/inf updates skipped since the start
            value_norm_mean=float(self._value_norm.mean),
            value_norm_std=float(self._value_norm.std),
        )
        return result

    def _monitor_vars_learn(self) -> List[str]:
        return [*UPDATE_STATS, 'explained_variance', 'cur_lr']

    def _state_dict_learn(self) -> Dict[str, Any]:
        return {
            'model': self._learn_model.state_dict(),
            'optimizer': self._optimizer.state_dict(),
            'value_norm': self._value_norm.state_dict(),
        }

    def _load_state_dict_learn(self, state_dict: Dict[str, Any]) -> None:
        """Restore a checkpoint's learn state: model, optimizer and value-norm statistics."""
        self._learn_model.load_state_dict(state_dict['model'])
        self._optimizer.load_state_dict(state_dict['optimizer'])
        self._value_norm.load_state_dict(state_dict['value_norm'])

    # ---------------------------------------------------------------- collect
    def _init_collect(self) -> None:
        self._collect_model = self._model

    @torch.inference_mode()  # no autograd bookkeeping at all: ~20% off a forward pass this small
    def _forward_collect(self, data: Dict[int, Dict[str, np.ndarray]]) -> Dict[int, Dict[str, np.ndarray]]:
        """{env_id: obs (A, ...)} -> {env_id: {action (A,), logit (A, N), value (A,)}}, actions sampled."""
        env_ids = list(data.keys())
        obs = stack_obs([data[i] for i in env_ids], self._device)  # {key: (B, A, ...)}
        out = acting(self._collect_model)(obs, mode='compute_actor_critic')
        # (B, A); argument checks off: they cost more than the sampling
        action = Categorical(logits=out['logit'], validate_args=False).sample()
        logit, value, action = out['logit'].cpu().numpy(), out['value'].cpu().numpy(), action.cpu().numpy()
        return {i: {'action': action[b], 'logit': logit[b], 'value': value[b]} for b, i in enumerate(env_ids)}

    def _process_transition(self, obs: Dict[str, np.ndarray], policy_output: Dict[str, np.ndarray],
                            timestep) -> Dict[str, Any]:
        """One env step of one env. ``cut`` and ``next_value`` are completed by the collector."""
        return {
            'obs': obs,
            'action': policy_output['action'],  # (A,)
            'logit': policy_output['logit'],  # (A, N)
            'value': policy_output['value'],  # (A,)
            'next_value': np.zeros_like(policy_output['value']),  # (A,)
            'reward': np.asarray(timestep.reward, np.float32),  # (A,) each player's reward
            'done': bool(timestep.done),
            'cut': bool(timestep.done),
        }

    def _get_train_sample(self, transitions: List[Dict[str, Any]]) -> Dict[str, Any]:
        """One env's T consecutive transitions -> arrays with time first: {key: (T, ...)}.

        GAE is computed in learn, on the whole rollout, so nothing is cut or dropped here.
        """
        sample = {k: np.stack([t[k] for t in transitions]) for k in transitions[0] if k != 'obs'}
        sample['obs'] = {k: np.stack([t['obs'][k] for t in transitions]) for k in transitions[0]['obs']}
        return sample

    # ------------------------------------------------------------------- eval
    def _init_eval(self) -> None:
        self._eval_model = self._model

    @torch.inference_mode()
    def _forward_eval(self, data: Dict[int, Dict[str, np.ndarray]]) -> Dict[int, Dict[str, np.ndarray]]:
        """{env_id: obs} -> {env_id: {action (A,)}}: greedy unless eval.sample."""
        env_ids = list(data.keys())
        obs = stack_obs([data[i] for i in env_ids], self._device)  # {key: (B, A, ...)}
        logit = acting(self._eval_model)(obs, mode='compute_actor')['logit']
        action = Categorical(logits=logit).sample() if self._cfg.eval.sample else logit.argmax(-1)  # (B, A)
        action = action.cpu().numpy()
        return {i: {'action': action[b]} for b, i in enumerate(env_ids)}
