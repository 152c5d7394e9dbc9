"""Our env as DI-engine's stock PPO expects it: registered in DI-engine's ENV_REGISTRY as 'gobigger_ding'.

The same game, opponents, reward and outcome as GoBiggerEnv ('gobigger'); only the observation and the reward's
shape change, to the formats of DI-engine's own models (ding/model/template/mavac.py, vac.py), as its MAPPO configs
for SMAC and PettingZoo feed them. Our features go in as they are, flattened: every OBS_SHAPES array of a player,
in OBS_SHAPES' order, masks as 0/1, is one vector of AGENT_STATE_DIM floats. So a comparison with our PPO isolates
the algorithm and the model (our encoder, relations and heads against DI-engine's MLPs), not the features.

    obs_format 'mavac' (ppo with multi_agent=True, model MAVAC: MAPPO with a centralised critic):
        agent_state   (A, D)           player i's own features                           the actor's input
        global_state  (A, D + A * D)   player i's features, then every player's in order  the critic's input
        action_mask   (A, ACTION_NUM)  all ones: every action is legal at every step
    obs_format 'vac' (ppo, model VAC shared by the players: independent PPO with parameter sharing):
        (A, D)  player i's own features; VAC's encoder and heads act on the last axis, so logits are
                (B, A, ACTION_NUM) and values (B, A): each player is an agent with its own value and ratio

Reward: (1,) float32, the mean over our players of GoBiggerEnv's per-player reward (env.reward, env.team_spirit
mixed as there), one team reward, as DI-engine's multi-agent envs give it. A per-player (A,) reward crashes
DI-engine's recomputed GAE (ding.rl_utils.gae multiplies next_value (N, A) by 1 - done (N,)); a (1,) reward is
broadcast against the (N, A) values there. info['eval_episode_return'] (GoBiggerEnv's mean of the players'
returns) is the sum of this reward over the game.

Only opponents the env plays ('bot', 'random', 'scripted') are allowed: 'self' and 'league' need the pipeline to play
the other teams, which DI-engine's serial pipeline does not.
"""
from typing import Any, Dict, Mapping

import gym
import numpy as np
from ding.envs import BaseEnvTimestep
from ding.utils import ENV_REGISTRY

from .actions import ACTION_NUM
from .features import OBS_SHAPES
from .gobigger_env import GoBiggerEnv
from .opponents import ENV_OPPONENTS

OBS_FORMATS = ('mavac', 'vac')
AGENT_STATE_DIM = sum(int(np.prod(shape)) for shape in OBS_SHAPES.values())  # D: one player's flattened features


def global_state_dim(player_num: int) -> int:
    """G: the width of MAVAC's global_state for a team of ``player_num``: the player's own features, then all."""
    return AGENT_STATE_DIM * (1 + player_num)


def flat_features(obs: Mapping[str, np.ndarray]) -> np.ndarray:
    """{key: (A, *OBS_SHAPES[key])} -> (A, AGENT_STATE_DIM) float32, keys in OBS_SHAPES' order, masks as 0/1."""
    player_num = len(next(iter(obs.values())))
    return np.concatenate([np.asarray(obs[k], np.float32).reshape(player_num, -1) for k in OBS_SHAPES], axis=1)


def ding_observation(obs: Mapping[str, np.ndarray], obs_format: str) -> Any:
    """GoBiggerEnv's observation in the input format of DI-engine's model ``obs_format`` (see the module's table)."""
    agent_state = flat_features(obs)  # (A, D)
    if obs_format == 'vac':
        return agent_state
    player_num = len(agent_state)
    everyone = np.broadcast_to(agent_state.reshape(1, -1), (player_num, player_num * AGENT_STATE_DIM))  # (A, A * D)
    return {
        'agent_state': agent_state,
        'global_state': np.concatenate([agent_state, everyone], axis=1),  # (A, D + A * D)
        'action_mask': np.ones((player_num, ACTION_NUM), np.float32),
    }


def model_shapes(obs_format: str, player_num: int) -> Dict[str, int]:
    """The keys of DI-engine's model config that follow from this env: MAVAC's or VAC's input and output sizes."""
    if obs_format == 'vac':
        return dict(obs_shape=AGENT_STATE_DIM, action_shape=ACTION_NUM)
    return dict(agent_obs_shape=AGENT_STATE_DIM, global_obs_shape=global_state_dim(player_num),
                action_shape=ACTION_NUM, agent_num=player_num)


@ENV_REGISTRY.register('gobigger_ding')
class GoBiggerDingEnv(GoBiggerEnv):
    """GoBiggerEnv with DI-engine's model formats: observation by cfg.obs_format, a (1,) team reward."""

    config = dict(
        GoBiggerEnv.config,
        opponent='bot',  # DI-engine's stock PPO plays one team: the other teams are the env's (ENV_OPPONENTS)
        obs_format='mavac',  # the model the observation is for, one of OBS_FORMATS (see the module's table)
    )

    def __init__(self, cfg: Mapping) -> None:
        cfg = dict(cfg)
        obs_format = cfg.get('obs_format', self.config['obs_format'])
        if obs_format not in OBS_FORMATS:
            raise ValueError(f'env.obs_format {obs_format!r} is not one of {OBS_FORMATS}')
        opponent = cfg.get('opponent', self.config['opponent'])
        if opponent not in ENV_OPPONENTS:
            raise ValueError(f'env.opponent {opponent!r}: DI-engine\'s stock PPO plays only against opponents the env '
                             f'plays, one of {ENV_OPPONENTS}')
        super().__init__(cfg)
        self._obs_format = obs_format
        A = self._player_num
        if obs_format == 'vac':
            self._ding_observation_space = gym.spaces.Box(-np.inf, np.inf, (A, AGENT_STATE_DIM), np.float32)
        else:
            self._ding_observation_space = gym.spaces.Dict({
                'agent_state': gym.spaces.Box(-np.inf, np.inf, (A, AGENT_STATE_DIM), np.float32),
                'global_state': gym.spaces.Box(-np.inf, np.inf, (A, global_state_dim(A)), np.float32),
                'action_mask': gym.spaces.Box(0, 1, (A, ACTION_NUM), np.float32),
            })  # fixed shapes: DI-engine's subprocess managers can pass them through shared memory
        self._team_reward_space = gym.spaces.Box(-np.inf, np.inf, (1, ), np.float32)

    @property
    def observation_space(self) -> gym.spaces.Space:
        return self._ding_observation_space

    @property
    def reward_space(self) -> gym.spaces.Box:
        return self._team_reward_space

    @property
    def player_num(self) -> int:
        return self._player_num

    def reset(self) -> Any:
        return ding_observation(super().reset(), self._obs_format)

    def step(self, action: Any) -> BaseEnvTimestep:
        obs, reward, done, info = super().step(action)
        team_reward = np.asarray([np.mean(reward)], np.float32)  # (1,): the players' mean
        return BaseEnvTimestep(ding_observation(obs, self._obs_format), team_reward, done, info)

    def __repr__(self) -> str:
        return f'GoBiggerDingEnv(obs_format={self._obs_format}, {super().__repr__()})'

