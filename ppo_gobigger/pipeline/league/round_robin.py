"""The league tool's games: a round robin of checkpoints, GoBigger's bots and a random team on held-out games.

Participants:

    checkpoint     a saved model (read weights only), played greedily: each player's most likely action, at the
                   decision rate it was trained with (its env.action_repeat)
    bot_level_k    the env's level-k BotAgents (the action's bot_level, see envs/gobigger_env.py)
    random         a uniformly random action per player and env step

The games step every gcd of the checkpoints' action_repeats GoBigger steps; a checkpoint trained with a k times
larger action_repeat decides on every k-th env step and holds in between (the action's hold, see
envs/gobigger_env.py), which plays out as its training games did.

Every combination of G participants (G = the teams of the preset) plays ``games`` games. From one game of a
combination to the next the seats rotate: in its game j, team g is played by the combination's member (g + j) % G,
so that nobody always plays the same team. The fixtures (combination, game) are numbered in that order and dealt
to the envs up front, fixture f to env f % env_num, so that the games do not depend on which env is faster; an
env that has played its fixtures goes on with uncounted games of random actions until the others are done (as
the evaluator's envs do). The envs play held-out games (is_evaluator: odd game seeds, never a training game).

Every finished fixture is recorded with its game's seed, who played each team, and each team's rank and final
score; ratings.py turns the records into TrueSkill ratings.
"""
import copy
import itertools
import logging
import math
import os
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from ...config import ConfigError, apply_overrides, compile_config
from ...envs.actions import ACTION_NUM
from ...envs.game import team_num
from ...envs.opponents import BOT_LEVELS
from ...policy.inference import stack_obs
from ..build import build_model, set_global_seed
from ..learn.checkpoint import CheckpointError, check_model_state, load_checkpoint
from ..threads import torch_threads
from ..play.env_manager import build_game_env_manager, close_env_manager, wait_until_idle
from ..progress import Progress

logger = logging.getLogger('ppo_gobigger')

RANDOM = 'random'
DEFAULT_PRESET = 'st_t2p2'  # the league's preset when no checkpoint names one
CKPT_SUFFIX = '.pth.tar'
BEST_CKPT = 'ckpt_best.pth.tar'  # a copy of one of a run's iteration checkpoints
PLAY_ENV_KEYS = ('action_repeat', )  # env settings that change how a policy's actions play out


@dataclass
class Participant:
    """One player of the league: a checkpoint (``path``), a bot level (``bot_level`` > 0) or the random team."""
    name: str  # 'iteration_1200' (a checkpoint's file name), 'bot_level_3', 'random'
    bot_level: int = 0
    path: Optional[str] = None
    train_iter: Optional[int] = None  # a checkpoint's counters
    envstep: Optional[int] = None
    trained_env: Optional[Dict[str, Any]] = None  # a checkpoint's env.preset and PLAY_ENV_KEYS
    run: Optional[str] = None  # the run folder (--run-dir) a checkpoint came from; None for a checkpoint given alone

    @property
    def kind(self) -> str:
        return 'checkpoint' if self.path is not None else 'bot' if self.bot_level else RANDOM


@dataclass
class League:
    """A played round robin: who took part, the settings of its games, and every fixture's record."""
    participants: List[Participant]
    settings: Dict[str, Any]
    records: List[Dict[str, Any]]  # in fixture order: see RoundRobin.play


def bot_participants(levels: Sequence[int]) -> List[Participant]:
    bad = [k for k in levels if k not in BOT_LEVELS]
    if bad:
        raise ConfigError(f'bot levels {bad} are not bot levels; allowed: {BOT_LEVELS}')
    return [Participant(f'bot_level_{k}', bot_level=k) for k in dict.fromkeys(levels)]


def checkpoint_paths(run_dir: str) -> List[str]:
    """The checkpoints (*.pth.tar) of a folder, e.g. a run's ckpt/ or league/, by file name."""
    if not os.path.isdir(run_dir):
        raise ConfigError(f'run folder not found: {run_dir}')
    paths = sorted(os.path.join(run_dir, n) for n in os.listdir(run_dir) if n.endswith(CKPT_SUFFIX))
    if not paths:
        raise ConfigError(f'no checkpoints (*{CKPT_SUFFIX}) in {run_dir}')
    return paths


def load_checkpoints(paths: Sequence[str], run_dirs: Sequence[str] = ()) -> Tuple[List[Participant], Dict]:
    """(participants, {name: model}) of the checkpoint files ``paths`` and of every checkpoint in ``run_dirs``
    (those ordered by envstep, with ``run`` set to their folder; a ckpt_best.pth.tar that repeats another checkpoint's
    counters is left out). A checkpoint that does not load, or does not fit the model of its own config, is a
    CheckpointError naming it."""
    loaded = [_load(p) for p in paths]
    for folder in run_dirs:
        found = [_load(p, run=os.path.normpath(folder)) for p in checkpoint_paths(folder)]
        counters = {(p.train_iter, p.envstep) for p, _ in found if os.path.basename(p.path) != BEST_CKPT}
        found = [(p, m) for p, m in found
                 if os.path.basename(p.path) != BEST_CKPT or (p.train_iter, p.envstep) not in counters]
        loaded += sorted(found, key=lambda pm: (pm[0].envstep, pm[0].path))
    unique = list({os.path.abspath(p.path): (p, m) for p, m in loaded}.values())  # a file given twice plays once
    _name_uniquely([p for p, _ in unique])
    return [p for p, _ in unique], {p.name: m for p, m in unique}


def _load(path: str, run: Optional[str] = None) -> Tuple[Participant, torch.nn.Module]:
    payload = load_checkpoint(path)  # weights only: raises CheckpointError naming the file
    if 'model' not in payload:
        raise CheckpointError(f'checkpoint {path} holds no model weights')
    try:
        cfg, _ = compile_config(payload['config'])
    except ConfigError as e:
        raise CheckpointError(f'checkpoint {path}: its stored config does not compile: {e}') from e
    model = build_model(cfg)
    check_model_state(model, payload['model'], path)
    model.load_state_dict(payload['model'])
    trained_env = {k: cfg.env[k] for k in ('preset', ) + PLAY_ENV_KEYS}
    participant = Participant(
        _without_suffix(os.path.basename(path)), path=path, train_iter=payload['train_iter'],
        envstep=payload['envstep'], trained_env=trained_env, run=run
    )
    return participant, model.eval()


def _name_uniquely(participants: List[Participant]) -> None:
    """Checkpoints of different folders may share a file name: those are named by their path instead."""
    counts: Dict[str, int] = {}
    for p in participants:
        counts[p.name] = counts.get(p.name, 0) + 1
    for p in participants:
        if counts[p.name] > 1:
            p.name = _without_suffix(os.path.normpath(p.path))


def _without_suffix(path: str) -> str:
    return path[:-len(CKPT_SUFFIX)] if path.endswith(CKPT_SUFFIX) else path


def schedule(participants: int, teams: int, games: int) -> List[Tuple[int, ...]]:
    """The fixtures in order: for each combination of ``teams`` of the participants, ``games`` games, each given as
    the participant index of every team (G,), the seats rotated by one from game to game."""
    return [
        tuple(combination[(g + j) % teams] for g in range(teams))
        for combination in itertools.combinations(range(participants), teams)
        for j in range(games)
    ]


class RoundRobin:
    """Plays the fixtures of a schedule on a launched env manager of envs with env.opponent 'league'."""

    def __init__(self, env_manager, participants: Sequence[Participant], models: Dict[str, torch.nn.Module],
                 fixtures: Sequence[Tuple[int, ...]], seed: int, progress: Optional[bool] = None,
                 decide_every: Optional[Dict[str, int]] = None) -> None:
        """
        Arguments:
            env_manager: a launched DI-engine env manager; its envs take every team's actions (G, A).
            participants: who plays; a checkpoint's model is ``models[name]``.
            fixtures: per game, the participant index of every team (schedule()).
            seed: seeds the envs (game seeds) and the random team's actions (per fixture).
            progress: show the games played as a bar (None: on a terminal; else log lines, see progress.py).
            decide_every: a checkpoint's env steps per decision (default 1), holding its moves in between.
        """
        self._env = env_manager
        self._participants = list(participants)
        self._models = models
        self._decide_every = dict(decide_every or {})
        self._fixtures = list(fixtures)
        self._seed = seed
        self._progress = progress

    def play(self) -> List[Dict[str, Any]]:
        """Play every fixture once. Returns the records in fixture order, each {fixture, game_seed, participants,
        team_ids, ranks, final_scores}, the last four by team (rank 1 = first; ties share the better rank)."""
        env_num = self._env.env_num
        todo = [list(range(k, len(self._fixtures), env_num)) for k in range(env_num)]  # env k's fixtures, in order
        playing: Dict[int, Tuple[Optional[int], np.random.Generator]] = {}  # env -> (fixture or None: filler, rng)
        steps: Dict[int, int] = {}  # env -> env steps of its current game
        filler_rng = np.random.default_rng([self._seed, len(self._fixtures)])
        records: List[Dict[str, Any]] = []
        envstep = 0
        self._env.seed(self._seed, dynamic_seed=True)
        self._env.reset()
        with Progress('league', len(self._fixtures), 'game', self._progress) as progress:
            while len(records) < len(self._fixtures):
                ready = self._env.ready_obs
                if not ready:
                    time.sleep(0.001)
                    continue
                for i in ready:
                    if i not in playing:  # a new game: its random moves come from its fixture, whichever env plays it
                        fixture = todo[i][0] if todo[i] else None
                        playing[i] = (fixture, filler_rng if fixture is None else
                                      np.random.default_rng([self._seed, fixture]))
                        steps[i] = 0
                timesteps = self._env.step(self._actions(ready, playing, steps))
                games_before = len(records)
                for i, timestep in timesteps.items():
                    fixture = playing[i][0]
                    if timestep.info.get('abnormal', False):
                        logging.warning(f'league env {i} returned an abnormal step ({timestep.info}); replaying')
                        playing.pop(i)  # the fixture is played again, in a new game
                        self._env.reset({i: None})
                        continue
                    envstep += 1
                    steps[i] += 1
                    if timestep.done:
                        playing.pop(i)
                        if fixture is not None:
                            todo[i].pop(0)
                            records.append(self._record(fixture, timestep.info))
                progress.update(len(records) - games_before, postfix=f'{envstep} env steps')
        wait_until_idle(self._env)  # the last games' resets run in the background: let them end
        return sorted(records, key=lambda r: r['fixture'])

    def _record(self, fixture: int, info: Dict[str, Any]) -> Dict[str, Any]:
        teams = info['teams']  # one dict per team
        return dict(
            fixture=fixture,
            game_seed=info['game_seed'],
            participants=[self._participants[p].name for p in self._fixtures[fixture]],
            team_ids=[t['team_id'] for t in teams],
            ranks=[int(t['rank']) for t in teams],
            final_scores=[float(t['final_score']) for t in teams],
        )

    def _actions(self, ready: Dict[int, Dict[str, np.ndarray]],
                 playing: Dict[int, Tuple[Optional[int], np.random.Generator]],
                 steps: Dict[int, int]) -> Dict[int, Dict[str, np.ndarray]]:
        """{env id: {'action': (G, A), 'bot_level': (G,), 'hold': (G,)}}, one forward pass per checkpoint over every
        env's teams where it decides this step."""
        actions: Dict[int, Dict[str, np.ndarray]] = {}
        by_model: Dict[str, List[Tuple[int, int]]] = {}  # checkpoint name -> [(env id, team index)]
        for i, obs in ready.items():
            G, A = next(iter(obs.values())).shape[:2]
            fixture, rng = playing[i]
            action = rng.integers(ACTION_NUM, size=(G, A))  # the random team's (and a filler game's) moves
            bot_level, hold = np.zeros(G, np.int64), np.zeros(G, bool)
            if fixture is not None:
                for team, p in enumerate(self._fixtures[fixture]):
                    participant = self._participants[p]
                    if participant.kind == 'bot':
                        bot_level[team] = participant.bot_level  # the env's bots play the team; its actions are ignored
                    elif participant.kind == 'checkpoint':
                        if steps[i] % self._decide_every.get(participant.name, 1):
                            hold[team] = True  # between two of its decisions: its players keep moving
                        else:
                            by_model.setdefault(participant.name, []).append((i, team))
            actions[i] = {'action': action, 'bot_level': bot_level, 'hold': hold}
        for name, places in by_model.items():
            played = greedy_actions(self._models[name], [{k: v[t] for k, v in ready[i].items()} for i, t in places])
            for (i, team), action in zip(places, played):
                actions[i]['action'][team] = action
        return actions


@torch.inference_mode()
def greedy_actions(model: torch.nn.Module, observations: List[Dict[str, np.ndarray]]) -> np.ndarray:
    """(B, A) each player's most likely action, one row per observation {key: (A, ...)}."""
    logit = model(stack_obs(observations), mode='compute_actor')['logit']  # (B, A, N)
    return logit.argmax(-1).cpu().numpy()


def play_league(
        participants: Sequence[Participant],
        models: Dict[str, torch.nn.Module],
        games: int,
        seed: int,
        preset: Optional[str] = None,
        env_num: int = 2,
        overrides: Sequence[str] = (),
        progress: Optional[bool] = None,
        fixtures: Optional[Sequence[Tuple[int, ...]]] = None,
) -> League:
    """Play the round robin of ``participants`` (checkpoints with their ``models``, bots, random), ``games`` games
    per combination, on held-out games of ``preset`` (default: the first checkpoint's, else st_t2p2) from the
    default config with ``overrides`` (--set KEY=VALUE, e.g. env.custom_cfg.frame_limit=200), ``env_num`` envs.
    ``fixtures``: the games to play instead of the round robin, each the participant index of every team (G,), as
    schedule() gives them (head_to_head.py). Raises ConfigError for a bad setting or too few participants."""
    if games < 1 or env_num < 1 or seed < 0:
        raise ConfigError(f'games per combination and envs must be >= 1 and the seed >= 0; got {games}, {env_num} '
                          f'and {seed}')
    names = [p.name for p in participants]
    if len(set(names)) != len(names):
        raise ConfigError(f'participant names must be unique; got {names}')
    checkpoints = [p for p in participants if p.kind == 'checkpoint' and p.trained_env is not None]
    if preset is None:
        preset = checkpoints[0].trained_env['preset'] if checkpoints else DEFAULT_PRESET
    main_config = apply_overrides({'env': {'preset': preset}}, list(overrides))
    cfg, create_cfg = compile_config(main_config)
    preset, teams = cfg.env.preset, team_num(cfg.env)  # --set env.preset=... has the last word
    if fixtures is not None and any(len(f) != teams for f in fixtures):
        raise ConfigError(f'each game of {preset} needs a participant for each of its {teams} teams')
    if fixtures is None and len(participants) < max(2, teams):
        raise ConfigError(f'a league of {preset} needs at least {max(2, teams)} participants (one per team); got '
                          f'{len(participants)}: {", ".join(names) or "none"}')
    if 'action_repeat' in main_config['env']:  # set by an override
        raise ConfigError('env.action_repeat cannot be set for a league: each checkpoint plays at the action_repeat '
                          'it was trained with')
    if checkpoints:  # the games step at the gcd of the decision rates; each checkpoint decides every k-th step
        cfg.env.action_repeat = math.gcd(*(p.trained_env['action_repeat'] for p in checkpoints))
    decide_every = {p.name: p.trained_env['action_repeat'] // cfg.env.action_repeat for p in checkpoints}
    per_combination = f' ({games} per combination of {teams})' if fixtures is None else ''
    fixtures = schedule(len(participants), teams, games) if fixtures is None else list(fixtures)
    logger.info(f'league: {len(participants)} participants, {len(fixtures)} games{per_combination} of {preset} on '
                f'{env_num} envs, seed {seed}')
    env_cfg = copy.deepcopy(cfg.env)
    env_cfg.pop('manager')
    env_cfg.update(opponent='league', is_evaluator=True)  # every team played by us, on held-out game seeds
    set_global_seed(seed)
    env_manager = build_game_env_manager(cfg, create_cfg, [copy.deepcopy(env_cfg) for _ in range(env_num)])
    try:
        env_manager.launch()
        # few torch threads while the envs run, as in training (threads fighting them made forward passes crawl)
        with torch_threads(cfg.policy.torch_threads):
            records = RoundRobin(env_manager, participants, models, fixtures, seed, progress, decide_every).play()
    finally:
        close_env_manager(env_manager)
    settings = dict(preset=preset, teams=teams, seed=seed, games_per_combination=games, env_num=env_num,
                    overrides=list(overrides), env=env_cfg, manager=cfg.env.manager.type, decide_every=decide_every)
    return League(list(participants), settings, records)
