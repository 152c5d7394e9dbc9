"""Our PPO under DI-engine's own workers: ``ding.entry.serial_pipeline_onpolicy((main_config, create_config))``.

DI-engine's serial entries build the policy registered as '<create_config.policy.type>_command', and its workers
call the policy in DI-engine's formats, not ours (pipeline/play/collector.py):

    worker                         calls                                       here
    SampleSerialCollector          _process_transition(obs, output, timestep)  adds next_obs (the bootstrap state)
                                   _get_train_sample(transitions: list)        -> a LIST of per-step samples, each
                                                                               with its next_value and cut
    BaseLearner                    _forward_learn(data: list)                  the samples stacked time-first as one
                                                                               env, then our PPO iteration unchanged
    InteractionSerialEvaluator     _forward_eval(obs as float32 tensors)       the observation's own dtypes back

A sample keeps the step's place in its trajectory: next_value is the critic's value of the next step's state
(the collected value of step t+1, or of next_obs at a trajectory's last step), and cut marks the trajectory's last
step, so GAE over the samples in collection order (one trajectory after another, as DI-engine's collector returns
them) is GAE over each trajectory, as our own collector's rollouts give it. What differs from our pipeline is
DI-engine's: its collector drops the unfinished trajectories at the end of each collect (the steps are played and
counted, not learnt) and its evaluator reports the reward, not the game's outcome. pipeline/serial.py stays the
package's training loop.

'gobigger_ppo' itself is untouched: only the '_command' class registered here speaks DI-engine's formats.
"""
from typing import Any, Dict, List, Union

import numpy as np
import torch

from ding.policy.command_mode_policy_instance import DummyCommandModePolicy
from ding.utils import POLICY_REGISTRY, deep_merge_dicts

from ..envs.features import OBS_DTYPES
from .gobigger_ppo import GoBiggerPPOPolicy
from .inference import acting, stack_obs

# the per-step fields of a sample (besides obs): shapes (A,), (A, N), or () for the flags
SAMPLE_KEYS = ('action', 'logit', 'value', 'next_value', 'reward', 'done', 'cut')


def as_numpy_obs(obs: Dict[str, Any]) -> Dict[str, np.ndarray]:
    """An observation {key: (A, ...)} as numpy arrays of the env's dtypes (DI-engine's workers may hand over
    float32 tensors, masks included)."""
    return {k: np.asarray(v.cpu() if isinstance(v, torch.Tensor) else v).astype(OBS_DTYPES[k], copy=False)
            for k, v in obs.items()}


def _numpy(x: Any) -> np.ndarray:
    return x.cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


class GoBiggerPPODingPolicy(GoBiggerPPOPolicy):
    """GoBiggerPPOPolicy in DI-engine's sample formats (the table above); the PPO itself is the parent's."""

    # DI-engine's workers also read collect.unroll_len (steps per sample; PPOPolicy's default)
    config = deep_merge_dicts(GoBiggerPPOPolicy.config, dict(collect=dict(unroll_len=1)))

    def _init_collect(self) -> None:
        super()._init_collect()
        self._unroll_len = self._cfg.collect.get('unroll_len', 1)  # 1: a sample is one env step

    def _forward_collect(self, data: Dict[int, Dict[str, Any]]) -> Dict[int, Dict[str, np.ndarray]]:
        return super()._forward_collect({i: as_numpy_obs(obs) for i, obs in data.items()})

    def _process_transition(self, obs: Dict[str, np.ndarray], policy_output: Dict[str, np.ndarray],
                            timestep) -> Dict[str, Any]:
        transition = super()._process_transition(obs, policy_output, timestep)
        transition['next_obs'] = timestep.obs  # the state a trajectory cut after this step bootstraps from
        return transition

    def _get_train_sample(self, transitions: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """One env's T consecutive transitions (DI-engine's trajectory, maybe as tensors) -> T samples, each
        {obs: {key: (A, ...)}, action (A,), logit (A, N), value (A,), next_value (A,), reward (A,), done, cut}."""
        value = np.stack([_numpy(t['value']) for t in transitions]).astype(np.float32)  # (T, A)
        last = transitions[-1]
        done = bool(_numpy(last['done']))
        next_value = np.zeros_like(value)  # (T, A); a game's last step has no next state (done: ignored by GAE)
        next_value[:-1] = value[1:]
        if not done:  # the trajectory stops inside a game: bootstrap from the critic's value of the next state
            next_value[-1] = self._bootstrap_value(as_numpy_obs(last['next_obs']))
        samples = []
        for t, transition in enumerate(transitions):
            sample = {k: _numpy(transition[k]) for k in ('action', 'logit', 'reward')}
            step_done = bool(_numpy(transition['done']))  # a middleware trajectory may hold a game's end inside
            sample.update(obs=as_numpy_obs(transition['obs']), value=value[t], next_value=next_value[t],
                          done=step_done, cut=step_done or t == len(transitions) - 1)
            samples.append(sample)
        return samples

    @torch.inference_mode()
    def _bootstrap_value(self, obs: Dict[str, np.ndarray]) -> np.ndarray:
        """(A,) the critic's value (normalised units, as collected values are) of one state."""
        value = acting(self._collect_model)(stack_obs([obs], self._device), mode='compute_critic')['value']  # (1, A)
        return value[0].cpu().numpy()

    def _forward_learn(self, data: Any) -> Union[Dict[str, float], List[Dict[str, float]]]:
        """One PPO iteration on DI-engine's samples, stacked in their order as one env's rollout {key: (T, 1, ...)},
        the trajectories kept apart by their cut flags.

        data: a list of samples (BaseLearner's; returns the iteration's figures), or the samples already stacked,
        {key: (T, ...)} (DI-engine's middleware trainer, pipeline/ding_pipelines.py; returns them in a list, one
        entry per iteration, as that trainer counts iterations)."""
        if isinstance(data, list):
            rollout = {k: torch.as_tensor(np.stack([_numpy(s[k]) for s in data])) for k in SAMPLE_KEYS}  # (T, ...)
            obs = {k: np.stack([as_numpy_obs(s['obs'])[k] for s in data]) for k in data[0]['obs']}  # (T, A, ...)
        else:
            rollout = {k: torch.as_tensor(_numpy(data[k])) for k in SAMPLE_KEYS}
            obs = {k: _numpy(data['obs'][k]).astype(OBS_DTYPES[k], copy=False) for k in OBS_DTYPES}
        rollout = {k: v[:, None] for k, v in rollout.items()}  # (T, 1, ...)
        rollout['obs'] = {k: torch.as_tensor(v)[:, None] for k, v in obs.items()}  # {key: (T, 1, A, ...)}
        rollout['valid'] = torch.ones(len(rollout['done']), 1, dtype=torch.bool)  # (T, 1)
        result = super()._forward_learn(rollout)
        return result if isinstance(data, list) else [result]

    def _forward_eval(self, data: Dict[int, Dict[str, Any]]) -> Dict[int, Dict[str, np.ndarray]]:
        return super()._forward_eval({i: as_numpy_obs(obs) for i, obs in data.items()})


@POLICY_REGISTRY.register('gobigger_ppo_command')
class GoBiggerPPOCommandModePolicy(GoBiggerPPODingPolicy, DummyCommandModePolicy):
    """What DI-engine's serial entries build for policy type 'gobigger_ppo' (as its PPOCommandModePolicy)."""
