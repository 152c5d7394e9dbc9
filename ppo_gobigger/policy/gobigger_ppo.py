"""Multi-agent PPO for GoBigger in DI-engine's policy form (learn / collect / eval modes).

The A players of our team share one policy. Each player has its own value (B, A) from a centralised critic, so
the probability ratio is clipped per player (MAPPO), never averaged over players first.

Shapes: T = rollout length per env, E = envs, A = players per team, N = actions, M = minibatch (env steps).
"""
import logging
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np
import torch
from easydict import EasyDict
from torch.distributions import Categorical

from ding.policy import Policy
from ding.utils import POLICY_REGISTRY

from ..envs.actions import ACTION_KINDS, ACTION_NUM
from .imitation import behaviour_cloning, frozen_copy, imitation_loss, teacher_log_probs
from .inference import acting, stack_obs
from .ppo_math import (ValueNorm, distillation_kl, explained_variance, gae, group_entropy, local_moments, policy_loss,
                       value_loss)


# what each minibatch update reports; learn returns their means over an iteration
UPDATE_STATS = ('policy_loss', 'value_loss', 'entropy', 'kind_entropy', 'total_loss', 'approx_kl', 'clipfrac',
                'grad_norm')
# What DI-engine's Policy.__init__ and serial entries read, fixed for this policy: not user config keys
# (config.default_config leaves them out). multi_gpu stays off: torchrun ranks average their gradients through
# learn_mode.set_attribute (pipeline/distributed/torchrun.py).
DING_FIXED = dict(on_policy=True, multi_gpu=False, bp_update_sync=True, traj_len_inf=False)
DING_FIXED_LEARN = dict(resume_training=False)


class NonFiniteLossError(RuntimeError):
    """Too many PPO updates in a row had a NaN or inf loss or gradient."""


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
        # (bool) With load_path: take that checkpoint's Adam moments and value-norm statistics too, so that PPO goes
        # on where its learner stopped. Needs a full checkpoint (ckpt/iteration_*.pth.tar), not published weights.
        load_learn_state=False,
        learn=dict(
            # (int) Passes over each rollout.
            epoch_per_collect=4,
            # (int) Minibatch size in env steps (each holds A players).
            batch_size=256,
            # (float) Adam learning rate.
            learning_rate=3e-4,
            # (bool) Anneal the learning rate linearly over max_env_step: each iteration runs at the share of the
            # budget left before its rollout (the first at the full rate, the last at 1 / iterations of it).
            lr_anneal=False,
            # (float) Weight of the value loss.
            value_weight=0.5,
            # (float) Weight of the entropy bonus.
            entropy_weight=0.01,
            # (float) After a kickstart (pretrain.env_steps > 0): weight of a cross-entropy term on a minibatch of
            # the demonstrations in every PPO update (kept in memory; a resumed run has none and drops it). 0: off.
            imitation_weight=0.0,
            # (float) After a kickstart: weight of KL(kickstart policy || current policy) on the rollout's states in
            # every PPO update (zoo/st_t2p2_lineage_s0 trained with 0.2). With no kickstart the weights of
            # policy.load_path are the teacher; it travels in every checkpoint, so a resumed run keeps it. 0: off.
            kickstart_kl=0.0,
            # (float) PPO clip range of the probability ratio.
            clip_ratio=0.2,
            # (float or None) Stop an iteration's updates at the first minibatch whose approx_kl from the rollout's
            # policy exceeds this (checked before its step; the rest of the epochs skipped). None: all epochs run.
            target_kl=None,
            # (bool) Clip the value update within clip_ratio of the collected value (in normalised units).
            value_clip=True,
            # (float or None) Dual clip constant c > 1 for negative advantages; None turns it off.
            dual_clip=None,
            # (bool) Normalise advantages within each minibatch.
            adv_norm=True,
            # (bool) Normalise value targets with running statistics of the returns (saved in checkpoints).
            value_norm=True,
            # (float) Clip of the global gradient norm.
            grad_clip=0.5,
            # (int or None) torch threads while learning, when the envs wait; None: one per core (under torchrun:
            # the machine's cores shared among its ranks).
            torch_threads=None,
            # (int) Updates in a row with a NaN/inf loss or gradient (each one skipped) before training stops.
            max_nonfinite_updates=10,
            # (float) Discount factor.
            discount_factor=0.99,
            # (float) GAE lambda.
            gae_lambda=0.95,
        ),
        collect=dict(
            # (int) Env steps collected per training iteration, over all collector envs.
            n_sample=2048,
        ),
        eval=dict(
            # (bool) Sample actions in evaluation instead of taking the most likely one.
            sample=False,
            evaluator=dict(
                # (int) Evaluate every this many collected env steps (and once before training).
                eval_freq=50000,
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
        self._demonstrations = None  # (obs, action) of a kickstart, when policy.learn.imitation_weight > 0
        self._teacher: Optional[torch.nn.Module] = None  # the frozen kickstart, when policy.learn.kickstart_kl > 0
        self._nonfinite_streak = 0  # NaN/inf updates in a row
        self._skipped_updates = 0  # NaN/inf updates in all
        # Handed in by a learner of several processes (learn_mode.set_attribute, pipeline/distributed/torchrun.py):
        # the mean gradient, the pooled (count, mean, variance) and the mean of a scalar over the processes.
        self._average_gradients: Callable[[Iterable[torch.nn.Parameter]], None] = lambda parameters: None
        self._pooled_moments: Callable[[torch.Tensor], Tuple[int, torch.Tensor, torch.Tensor]] = local_moments
        self._mean_over_ranks: Callable[[torch.Tensor], torch.Tensor] = lambda x: x

    def _skip_nonfinite_update(self, loss: torch.Tensor, grad_norm: torch.Tensor) -> None:
        """Drop this update's gradient; stop training after max_nonfinite_updates in a row."""
        self._optimizer.zero_grad()
        self._nonfinite_streak += 1
        self._skipped_updates += 1
        limit = self._cfg.learn.max_nonfinite_updates
        logging.warning(f'skipped an update with a non-finite loss ({float(loss):.4g}) or gradient norm '
                        f'({float(grad_norm):.4g}); {self._nonfinite_streak} in a row (training stops at {limit})')
        if self._nonfinite_streak >= limit:
            raise NonFiniteLossError(f'{self._nonfinite_streak} updates in a row had a NaN/inf loss or gradient; '
                                     'stopping. The checkpoints written so far hold the last good parameters.')

    def _set_learning_rate(self, progress: float) -> float:
        """This iteration's learning rate: with lr_anneal, the share of the budget left before the iteration's
        rollout (progress in [0, 1) is the share of max_env_step collected before it), else the constant rate."""
        cfg = self._cfg.learn
        lr = cfg.learning_rate * (max(0.0, 1.0 - progress) if cfg.lr_anneal else 1.0)
        for group in self._optimizer.param_groups:
            group['lr'] = lr
        return lr

    def adopt_learn_state(self, state_dict: Dict[str, Any]) -> None:
        """policy.load_learn_state: the optimizer's moments and the value-norm statistics of another run's checkpoint
        (its weights are loaded with the model); this run's counters stay fresh."""
        self._optimizer.load_state_dict(state_dict['optimizer'])
        self._value_norm.load_state_dict(state_dict['value_norm'])

    def keep_as_kickstart(self) -> None:
        """The current weights become the kickstart that policy.learn.kickstart_kl distils: a frozen copy, never
        trained (after imitation, or the weights of policy.load_path when there is none)."""
        self._teacher = frozen_copy(self._learn_model)

    def _forward_learn(self, rollout: Dict[str, Any], progress: float = 0.0) -> Dict[str, float]:
        """One PPO iteration on one rollout; returns the mean of each logged quantity over the updates.

        progress: the share of max_env_step collected before this rollout (the lr_anneal schedule).

        rollout (from the collector; tensors, time-first):
            obs: {key: (T, E, A, ...)}, action: (T, E, A), logit: (T, E, A, N),
            value: (T, E, A) and next_value: (T, E, A) as the critic predicted them (normalised units),
            reward: (T, E, A), done: (T, E), cut: (T, E),
            valid: (T, E) False where an env's segment is padded (async managers; a team that sat out games).
        """
        cfg = self._cfg.learn
        lr = self._set_learning_rate(progress)
        obs = {k: v.to(self._device) for k, v in rollout['obs'].items()}
        data = {k: v.to(self._device) for k, v in rollout.items() if k != 'obs'}
        T, E, A = data['value'].shape

        # 1. advantages and returns in return units (the critic's outputs denormalised)
        with torch.no_grad():
            value = self._value_norm.denormalize(data['value']) if cfg.value_norm else data['value']
            next_value = self._value_norm.denormalize(data['next_value']) if cfg.value_norm else data['next_value']
            advantage = gae(data['reward'], value, next_value, data['done'], data['cut'], cfg.discount_factor,
                            cfg.gae_lambda)  # (T, E, A)
            returns = advantage + value  # (T, E, A)
            if not torch.isfinite(returns[data['valid']]).all():  # a NaN/inf reward or value: drop the rollout
                self._skip_nonfinite_update(returns.sum(), torch.tensor(float('nan')))
                return self._result({}, float('nan'), lr)
            ev = explained_variance(value[data['valid']].flatten(), returns[data['valid']].flatten())
            # 2. value targets and old values in the critic's (normalised) units, with the statistics updated
            if cfg.value_norm:  # under torchrun: the statistics of every rank's returns
                self._value_norm.update_moments(*self._pooled_moments(returns[data['valid']]))
                target = self._value_norm.normalize(returns)
                old_value = self._value_norm.normalize(value)
            else:
                target, old_value = returns, value
            old_logp = Categorical(logits=data['logit']).log_prob(data['action'])  # (T, E, A)

        # 3. flatten time and envs, keeping the valid steps: S samples, each with A players
        valid = data['valid'].reshape(T * E)  # (T * E,) bool; False where an env's segment was padded
        S = int(valid.sum())
        flat = lambda x: x.reshape(T * E, *x.shape[2:])[valid]  # noqa: E731  (T, E, ...) -> (S, ...)
        obs = {k: flat(v) for k, v in obs.items()}  # {key: (S, A, ...)}
        action, old_logp, advantage = flat(data['action']), flat(old_logp), flat(advantage)  # (S, A)
        target, old_value = flat(target), flat(old_value)  # (S, A)
        # the kickstart's policy on every state of the rollout, once: (S, A, N)
        teacher_logp = teacher_log_probs(self._teacher, obs, cfg.batch_size) if self._teacher is not None else None

        # 4. epochs of shuffled minibatches, until a minibatch's policy has moved more than target_kl
        self._learn_model.train()
        stats: Dict[str, List[float]] = {}
        kl_stopped = False
        for _ in range(cfg.epoch_per_collect):
            if kl_stopped:
                break
            for idx in torch.randperm(S, device=self._device).split(cfg.batch_size):
                out = self._learn_model({k: v[idx] for k, v in obs.items()}, mode='compute_actor_critic')
                dist = Categorical(logits=out['logit'])  # batch shape (M, A)
                logp = dist.log_prob(action[idx])  # (M, A)
                adv = advantage[idx]  # (M, A)
                if cfg.adv_norm:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pl = policy_loss(logp, old_logp[idx], adv, cfg.clip_ratio, cfg.dual_clip)
                if cfg.target_kl is not None and self._mean_over_ranks(pl['approx_kl'].detach()) > cfg.target_kl:
                    kl_stopped = True
                    break
                vl = value_loss(out['value'], old_value[idx], target[idx], cfg.clip_ratio if cfg.value_clip else None)
                entropy = dist.entropy().mean()
                loss = pl['loss'] + cfg.value_weight * vl - cfg.entropy_weight * entropy
                # logged, not learnt from: the entropy of the kind of action (move, eject, split), which falls to ~0
                # in training (trained agents never eject or split; docs/results.md); None for a test's toy model
                kind_entropy = None
                if out['logit'].shape[-1] == ACTION_NUM:
                    with torch.no_grad():
                        kind_entropy = group_entropy(out['logit'], ACTION_KINDS).mean()
                imitation = kickstart_kl = None
                if cfg.imitation_weight > 0 and self._demonstrations is not None:
                    imitation = imitation_loss(self._learn_model, self._demonstrations, len(idx))
                    loss = loss + cfg.imitation_weight * imitation
                if teacher_logp is not None:  # KL(kickstart || policy) of each player, mean over (M, A)
                    kickstart_kl = distillation_kl(teacher_logp[idx], dist.logits).mean()  # logged at weight 0
                    loss = loss + cfg.kickstart_kl * kickstart_kl

                self._optimizer.zero_grad()
                loss.backward()
                # under torchrun: the mean gradient of all ranks, before clipping. A NaN/inf gradient of any rank
                # then reaches every rank, and they all skip this update below.
                self._average_gradients(self._learn_model.parameters())
                grad_norm = torch.nn.utils.clip_grad_norm_(self._learn_model.parameters(), cfg.grad_clip)
                if not (torch.isfinite(loss) and torch.isfinite(grad_norm)):
                    self._skip_nonfinite_update(loss, grad_norm)
                    continue
                self._nonfinite_streak = 0
                self._optimizer.step()

                for name, x in (
                    ('policy_loss', pl['loss']), ('value_loss', vl), ('entropy', entropy),
                    ('kind_entropy', kind_entropy), ('total_loss', loss),
                    ('approx_kl', pl['approx_kl']), ('clipfrac', pl['clipfrac']), ('grad_norm', grad_norm),
                    ('imitation_loss', imitation), ('kickstart_kl', kickstart_kl)
                ):
                    if x is not None:
                        stats.setdefault(name, []).append(float(x.detach()))
        return {**self._result(stats, ev, lr), 'kl_stopped': float(kl_stopped)}

    def imitate(self, obs: Dict[str, torch.Tensor], action: torch.Tensor, returns: torch.Tensor, epochs: int,
                on_update: Optional[Callable[[int, Dict[str, float]], None]] = None,
                learning_rate: Optional[float] = None) -> Dict[str, float]:
        """The kickstart's behaviour cloning (imitation.behaviour_cloning) with this policy's model, optimizer and
        value normalisation, at ``learning_rate`` (None: policy.learn.learning_rate). With imitation_weight > 0
        the demonstrations stay for the PPO updates' imitation term; with kickstart_kl > 0 the result is the
        teacher. obs: {key: (S, A, ...)}, action: (S, A), returns: (S, A) in return units."""
        cfg = self._cfg.learn
        obs = {k: v.to(self._device) for k, v in obs.items()}
        action, returns = action.to(self._device), returns.to(self._device)
        if cfg.imitation_weight > 0:
            self._demonstrations = (obs, action)
        for group in self._optimizer.param_groups:
            group['lr'] = cfg.learning_rate if learning_rate is None else learning_rate
        stats = behaviour_cloning(self._learn_model, self._optimizer, obs, action, returns,
                                  self._value_norm if cfg.value_norm else None, epochs, cfg.batch_size,
                                  cfg.value_weight, cfg.grad_clip, on_update)
        if cfg.kickstart_kl > 0:
            self.keep_as_kickstart()
        return stats

    def _result(self, stats: Dict[str, List[float]], ev: float, lr: float) -> Dict[str, float]:
        """Mean of each logged quantity over the updates applied (nan when every update was skipped)."""
        result = {k: float(np.mean(stats[k])) if k in stats else float('nan') for k in UPDATE_STATS}
        for name in ('imitation_loss', 'kickstart_kl'):  # a kickstarted run's terms
            if name in stats:
                result[name] = float(np.mean(stats[name]))
        result.update(
            explained_variance=ev,
            cur_lr=lr,
            update_count=len(stats.get('total_loss', [])),  # updates applied (skipped ones excluded)
            skipped_updates=self._skipped_updates,  # NaN/inf updates skipped since the start
            value_norm_mean=float(self._value_norm.mean),
            value_norm_std=float(self._value_norm.std),
        )
        if 'imitation_loss' in result:
            result['imitation_weight'] = self._cfg.learn.imitation_weight
        if self._teacher is not None:
            result['kickstart_kl_weight'] = self._cfg.learn.kickstart_kl
        return result

    def _monitor_vars_learn(self) -> List[str]:
        return [*UPDATE_STATS, 'explained_variance', 'cur_lr']

    def _state_dict_learn(self) -> Dict[str, Any]:
        state = {
            'model': self._learn_model.state_dict(),
            'optimizer': self._optimizer.state_dict(),
            'value_norm': self._value_norm.state_dict(),
        }
        if self._teacher is not None:
            state['teacher'] = self._teacher.state_dict()
        return state

    def _load_state_dict_learn(self, state_dict: Dict[str, Any]) -> None:
        """Restore a checkpoint's learn state. With kickstart_kl > 0 the teacher is the checkpoint's own, or, in a
        checkpoint written before any PPO update (a run's kickstart.pth.tar: train_iter 0), its weights; any other
        checkpoint without one is a ValueError (it would silently make a trained policy the teacher)."""
        self._learn_model.load_state_dict(state_dict['model'])
        self.adopt_learn_state(state_dict)
        self._teacher = None
        if self._cfg.learn.kickstart_kl <= 0:
            return
        if 'teacher' in state_dict or state_dict.get('train_iter') == 0:  # its own teacher, or a kickstart
            self.keep_as_kickstart()
            self._teacher.load_state_dict(state_dict.get('teacher', state_dict['model']))
        else:
            raise ValueError(f"policy.learn.kickstart_kl={self._cfg.learn.kickstart_kl} needs the kickstart's weights, "
                             f"and this checkpoint (train_iter {state_dict.get('train_iter')}) has none: resume "
                             'from a kickstart.pth.tar or a checkpoint of a run with kickstart_kl > 0, or set it to 0')

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
