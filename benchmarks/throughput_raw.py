"""The raw rate of benchmarks/throughput.py: env_num processes, each stepping the config's GoBigger game with its
opponents and no features, model or learning (see throughput.py's docstring), and their per-step costs. Opponents
that the trainer plays with policies ('self', 'league') are GoBigger's bots of env.bot_level here."""
import multiprocessing
import random
import time
from typing import Dict

import numpy as np
import torch

import gobigger.configs
from gobigger.utils import deep_merge_dicts
from ppo_gobigger.envs.actions import ACTION_NUM, to_game_action
from ppo_gobigger.envs.engine import create_game
from ppo_gobigger.envs.features import GameConsts, team_features
from ppo_gobigger.envs.game import STEP_MUL
from ppo_gobigger.envs.opponents import POLICY_OPPONENTS, Opponents

FEATURE_EVERY = 8  # worker 0 featurises every 8th state (its feature time is left out of its rate)


def raw_worker(env_cfg: Dict, our_side: str, seconds: float, seed: int, time_features: bool,
               out: multiprocessing.Queue) -> None:
    """Step the game for ``seconds`` of wall time, our team playing ``our_side`` ('random' moves or 'bots' of the
    opponents' level); put {steps (env steps), active_s, game_s, opponents_s (all bots), features_s, ...}."""
    torch.set_num_threads(1)
    random.seed(seed)  # BotAgent draws from the global `random`
    rng = np.random.default_rng(seed)
    game_cfg = deep_merge_dicts(getattr(gobigger.configs, env_cfg.preset), env_cfg.custom_cfg)
    consts = GameConsts.from_game_cfg(game_cfg)
    A, team = consts.player_num_per_team, 0  # our team is team 0: players 0 .. A-1
    our_ids = list(range(A))
    opponent = 'bot' if env_cfg.opponent in POLICY_OPPONENTS else env_cfg.opponent  # raw: no policy anywhere
    opponents = Opponents(opponent, [p for p in range(consts.team_num * A) if p not in our_ids], env_cfg.bot_level,
                          env_cfg.engine)
    our_bots = Opponents('bot', our_ids, env_cfg.bot_level, env_cfg.engine) if our_side == 'bots' else None
    game = create_game(env_cfg.preset, env_cfg.custom_cfg, STEP_MUL, env_cfg.engine)  # training's engine
    t = dict(steps=0, resets=0, game_s=0.0, opponents_s=0.0, reset_s=0.0, features_s=0.0, features_cpu_s=0.0,
             featurised_steps=0)
    deadline = time.perf_counter() + seconds
    start, cpu_start = time.perf_counter(), time.process_time()
    done = True
    while time.perf_counter() < deadline:
        t0 = time.perf_counter()
        if done:
            game.server._random.seed(seed + t['resets'])
            opponents.reset(seed + t['resets'])
            if our_bots is not None:
                our_bots.reset(seed + t['resets'] + 1)
            global_state, states = game.reset()
            t['resets'] += 1
            t['reset_s'] += time.perf_counter() - t0
            done = False
            continue
        given = {pid: to_game_action(k) for pid, k in zip(our_ids, rng.integers(ACTION_NUM, size=A))}
        for repeat in range(env_cfg.action_repeat):  # one env step; our random moves hold after the first
            t0 = time.perf_counter()
            actions = our_bots.act(states) if our_bots is not None else dict(given) if repeat == 0 else {}
            actions.update(opponents.act(states))
            t1 = time.perf_counter()
            (global_state, states), _, done, _ = game.step(actions)
            t['opponents_s'] += t1 - t0
            t['game_s'] += time.perf_counter() - t1
            if done:
                break
        t2, cpu2 = time.perf_counter(), time.process_time()
        t['steps'] += 1
        if time_features and t['steps'] % FEATURE_EVERY == 0:
            team_features(global_state, states, our_ids, team, consts)
            t['features_s'] += time.perf_counter() - t2
            t['features_cpu_s'] += time.process_time() - cpu2
            t['featurised_steps'] += 1
    t['active_s'] = time.perf_counter() - start - t['features_s']
    t['cpu_s'] = time.process_time() - cpu_start - t['features_cpu_s']
    game.close()
    out.put(t)


def measure_raw(env_cfg: Dict, env_num: int, seconds: float, seed: int, our_side: str = 'random') -> Dict:
    """The raw rate (env steps/s) of env_num processes, our team playing ``our_side``, and their per-step costs."""
    ctx = multiprocessing.get_context('fork')
    queue = ctx.Queue()
    workers = [
        ctx.Process(target=raw_worker, args=(env_cfg, our_side, seconds, seed + 1000 * i, i == 0, queue), daemon=True)
        for i in range(env_num)
    ]
    for w in workers:
        w.start()
    per_worker = [queue.get(timeout=seconds + 120) for _ in workers]
    for w in workers:
        w.join()
    steps = sum(w['steps'] for w in per_worker)
    total = {k: sum(w[k] for w in per_worker) for k in ('game_s', 'opponents_s', 'reset_s', 'active_s')}
    first = next(w for w in per_worker if w['featurised_steps'])
    return dict(
        our_side=our_side, env_steps=steps,
        env_steps_per_s=sum(w['steps'] / w['active_s'] for w in per_worker),
        cpu_ms_per_step=1e3 * sum(w['cpu_s'] for w in per_worker) / steps,  # game + bots, CPU of one core
        game_step_ms=1e3 * total['game_s'] / steps,
        opponents_step_ms=1e3 * total['opponents_s'] / steps,
        reset_ms_per_step=1e3 * total['reset_s'] / steps,
        other_ms_per_step=1e3 * (total['active_s'] - total['game_s'] - total['opponents_s'] - total['reset_s']) / steps,
        features_step_ms=1e3 * first['features_s'] / first['featurised_steps'],
        features_cpu_ms_per_step=1e3 * first['features_cpu_s'] / first['featurised_steps'],
        featurised_steps=first['featurised_steps'],
        per_worker_steps=[w['steps'] for w in per_worker],
    )
