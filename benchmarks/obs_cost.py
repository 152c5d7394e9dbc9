"""What one env step's observation costs, from the env to the learner: `python benchmarks/obs_cost.py [--before DIR]`.

Plays one st_t2p2 game with level-2 bots driving all four players (bot play keeps many clones in view), records
GoBigger's states and turns them into team 0's observations. On those it measures, on one thread:
  - bytes of one env step's observation (what shared memory, rollouts, demonstrations and Ray carry);
  - features: team_features for the 2 players of one step, on the recorded states;
  - inference: 8 envs' observations stacked to tensors (as the collector does), then compute_actor_critic under
    torch.inference_mode: a batch of 8 envs x 2 players;
  - update: 512 env steps gathered from the game's observations, then compute_actor_critic, a loss, backward and an
    Adam step.

--before DIR compares with another checkout of the package (e.g. `git archive b915a16 | tar -x -C /tmp/before`),
imported into this same process beside the current one (``import_package``). Every measurement alternates between the
two call by call on the same data, in rounds; the table gives medians over all samples and, as after / before, the
median over rounds of the ratio within a round (this machine's load drifts between rounds: it cancels out). The
older model gets the current model's weights, or both a checkpoint's (--weights; load_state_dict, strict: same
names and shapes), and their outputs on the same steps are compared.
Writes benchmarks/results/obs_cost.json. Nothing is asserted: the numbers are for reading.
"""
import argparse
import importlib
import os
import platform
import random
import sys
import time
import types
from typing import Callable, Dict, List, Optional

import numpy as np
import torch

from ppo_gobigger.files import write_json  # this checkout's; import_package detaches it with the rest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESET = 'st_t2p2'
OUR_TEAM = 0
ENVS = 8  # inference batch: envs x 2 players
BATCH = 512  # update minibatch, env steps
KEYS = ('features_us', 'stack_us', 'inference_ms', 'gather_ms', 'update_ms')  # timed; plus bytes_per_env_step


def import_package(checkout: str) -> types.SimpleNamespace:
    """The ppo_gobigger package of `checkout`, imported and then detached from sys.modules (and its registry
    entries dropped), so that another checkout's package can be imported beside it. None of the pieces used here
    imports inside a function, so each keeps its own checkout's modules."""
    from ding.utils import ENV_REGISTRY, MODEL_REGISTRY

    def detach() -> None:
        for name in [n for n in sys.modules if n == 'ppo_gobigger' or n.startswith('ppo_gobigger.')]:
            del sys.modules[name]
        for registry in (ENV_REGISTRY, MODEL_REGISTRY):
            registry.pop('gobigger_ppo', None)

    detach()
    sys.path.insert(0, checkout)
    try:
        envs, model = importlib.import_module('ppo_gobigger.envs'), importlib.import_module('ppo_gobigger.model')
    finally:
        sys.path.remove(checkout)
    if not envs.__file__.startswith(os.path.join(checkout, '')):
        raise RuntimeError(f'imported {envs.__file__}, not the package of {checkout}')
    detach()
    return types.SimpleNamespace(
        checkout=checkout, GameConsts=envs.GameConsts, team_features=envs.team_features,
        GoBiggerPPoModel=model.GoBiggerPPoModel
    )


def play(frames: int, seed: int):
    """One game with level-2 bots on all players -> (GoBigger's (global_state, player_states) after every step,
    the game config, our team's player ids)."""
    import gobigger.configs
    from gobigger.agents import BotAgent
    from gobigger.envs import create_env
    from gobigger.utils import deep_merge_dicts
    custom = {'frame_limit': frames}
    game = create_env(PRESET, custom, step_mul=2)
    game.server._random.seed(seed)
    random.seed(seed)
    global_state, states = game.reset()
    team = dict(game.get_team_infos())[OUR_TEAM]
    bots = {pid: BotAgent(name=pid, level=2) for pid in states}
    recorded, done = [], False
    while not done:
        (global_state, states), _, done, _ = game.step({pid: bot.step(states[pid]) for pid, bot in bots.items()})
        recorded.append((global_state, states))
    game.close()
    return recorded, deep_merge_dicts(getattr(gobigger.configs, PRESET), custom), team


class Side:
    """One checkout's features and model on the recorded game."""

    def __init__(self, package: types.SimpleNamespace, recorded, game_cfg, team, seed: int) -> None:
        consts = package.GameConsts.from_game_cfg(game_cfg)
        self.features = lambda t: package.team_features(*recorded[t], team, OUR_TEAM, consts)
        self.obs = [self.features(t) for t in range(len(recorded))]  # {key: (A, ...)} per step
        self.pool = {k: torch.from_numpy(np.stack([o[k] for o in self.obs])) for k in self.obs[0]}  # (T, A, ...)
        torch.manual_seed(seed)
        self.model = package.GoBiggerPPoModel(hidden_size=64)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=3e-4)

    def time_features(self, t: int) -> float:
        start = time.perf_counter()
        self.features(t)
        return time.perf_counter() - start

    def time_inference(self, steps: np.ndarray) -> List[float]:
        """[stack seconds, forward seconds] for the observations of `steps`, as ENVS envs."""
        start = time.perf_counter()
        x = {k: torch.from_numpy(np.stack([self.obs[t][k] for t in steps])) for k in self.obs[0]}  # (ENVS, A, ...)
        mid = time.perf_counter()
        with torch.inference_mode():
            self.model(x, 'compute_actor_critic')
        return [mid - start, time.perf_counter() - mid]

    def time_update(self, idx: torch.Tensor) -> List[float]:
        """[gather seconds, forward + backward + step seconds] for the env steps idx (BATCH,)."""
        start = time.perf_counter()
        x = {k: v[idx] for k, v in self.pool.items()}  # (BATCH, A, ...)
        mid = time.perf_counter()
        out = self.model(x, 'compute_actor_critic')
        loss = -out['logit'].log_softmax(-1)[..., 0].mean() + out['value'].pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return [mid - start, time.perf_counter() - mid]

    def outputs(self, steps: torch.Tensor) -> Dict[str, np.ndarray]:
        x = {k: v[steps] for k, v in self.pool.items()}  # (len(steps), A, ...)
        with torch.inference_mode():
            out = {'embedding': self.model.encoder(x), **self.model(x, 'compute_actor_critic')}
        return {k: v.numpy() for k, v in out.items()}


def measure(sides: Dict[str, Side], rounds: int, seed: int) -> Dict[str, Dict[str, List[List[float]]]]:
    """Each round: features of 1/5 of the game's steps, 20 inference batches, 1 update; every call is made by each
    side in turn on the same data (the order alternates). Returns {side: {key: one list of samples per round}}."""
    rng = np.random.default_rng(seed)
    samples = {name: {k: [] for k in KEYS} for name in sides}
    steps = len(next(iter(sides.values())).obs)

    def each(call: Callable[[Side], List[float]], keys, scales, order: int) -> None:
        names = list(sides) if order % 2 == 0 else list(sides)[::-1]
        for name in names:
            for key, scale, value in zip(keys, scales, call(sides[name])):
                samples[name][key][-1].append(scale * value)

    for r in range(rounds):
        for name in sides:
            for key in KEYS:
                samples[name][key].append([])
        for i, t in enumerate(range(r % 5, steps, 5)):
            each(lambda side: [side.time_features(t)], ['features_us'], [1e6], i)
        for i in range(20):
            batch = rng.choice(steps, ENVS, replace=False)  # 8 envs at different points of a game
            each(lambda side: side.time_inference(batch), ['stack_us', 'inference_ms'], [1e6, 1e3], i)
        idx = torch.from_numpy(rng.choice(steps, BATCH, replace=steps < BATCH))
        each(lambda side: side.time_update(idx), ['gather_ms', 'update_ms'], [1e3, 1e3], r)
        print(f'round {r + 1}/{rounds} done', flush=True)
    return samples


def compare_outputs(sides: Dict[str, Side], weights: Optional[str], steps: int = 256) -> Dict[str, float]:
    """Both models get the same weights (strict load: same names and shapes): a checkpoint's (`weights`), or else
    the current model's. How far apart their outputs are on the same steps: max |difference| and, for scale,
    max |output|; the share of players whose greedy action agrees."""
    if weights:
        state = torch.load(weights, map_location='cpu', weights_only=True)
        state = state.get('model', state)  # a training checkpoint holds the model's state_dict under 'model'
        sides['after'].model.load_state_dict(state)
    sides['before'].model.load_state_dict(sides['after'].model.state_dict())
    picks = torch.from_numpy(np.linspace(0, len(sides['after'].obs) - 1, steps).astype(np.int64))
    before, after = sides['before'].outputs(picks), sides['after'].outputs(picks)
    out = dict(weights=weights or 'the current model after its timed updates', steps=steps)
    for k in ('embedding', 'logit', 'value'):
        out[f'{k}_max_abs_diff'] = float(np.abs(before[k] - after[k]).max())
        out[f'{k}_max_abs'] = float(np.abs(after[k]).max())
    out['same_argmax'] = float((before['logit'].argmax(-1) == after['logit'].argmax(-1)).mean())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--before', help='a checkout of an older version of the package to compare with')
    parser.add_argument('--frames', type=int, default=3600, help='frame_limit of the recorded game (3600 = full)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--rounds', type=int, default=16, help='timing rounds')
    parser.add_argument('--weights', help='with --before: a checkpoint whose model both compare their outputs with')
    args = parser.parse_args()
    if args.before and not os.path.isdir(os.path.join(args.before, 'ppo_gobigger')):
        raise SystemExit(f'--before {args.before!r} holds no ppo_gobigger package')
    torch.set_num_threads(1)

    checkouts = {**({'before': os.path.abspath(args.before)} if args.before else {}), 'after': ROOT}
    packages = {name: import_package(path) for name, path in checkouts.items()}
    recorded, game_cfg, team = play(args.frames, args.seed)
    sides = {name: Side(package, recorded, game_cfg, team, args.seed) for name, package in packages.items()}
    samples = measure(sides, args.rounds, args.seed)

    clones = np.array([o['clone_mask'].sum(-1).mean() for o in sides['after'].obs])
    medians = {
        name: {'bytes_per_env_step': int(sum(v.nbytes for v in side.obs[0].values())),
               **{k: float(np.median(np.concatenate(v))) for k, v in samples[name].items()}}
        for name, side in sides.items()
    }
    result = dict(
        preset=PRESET, bots='level 2 on all 4 players', frames=args.frames, seed=args.seed, steps=len(recorded),
        mean_clones_in_view=float(clones.mean()), steps_with_16_clones=float((clones == 16).mean()),
        inference_batch=f'{ENVS} envs x 2 players', update_batch_env_steps=BATCH, threads=1, rounds=args.rounds,
        samples_per_side={k: sum(map(len, v)) for k, v in samples['after'].items()},
        obs_shapes={name: {k: 'x'.join(map(str, v.shape)) for k, v in side.obs[0].items()}
                    for name, side in sides.items()},
        medians=medians,
        machine=dict(python=platform.python_version(), numpy=np.__version__, torch=torch.__version__,
                     cpus=os.cpu_count(), load_average=[round(x, 2) for x in os.getloadavg()]),
    )
    if 'before' in sides:
        per_round = {
            k: [float(np.median(a) / np.median(b)) for a, b in zip(samples['after'][k], samples['before'][k])]
            for k in KEYS
        }
        result['checkouts'] = checkouts
        result['after_over_before'] = {
            'bytes_per_env_step': medians['after']['bytes_per_env_step'] / medians['before']['bytes_per_env_step'],
            **{k: float(np.median(v)) for k, v in per_round.items()}
        }
        result['after_over_before_per_round'] = {k: [round(x, 3) for x in v] for k, v in per_round.items()}
        result['same_weights_outputs'] = compare_outputs(sides, args.weights)

    print(f"{PRESET}, level-2 bots, {len(recorded)} steps, {clones.mean():.1f} clones in view on average; "
          f"medians on one thread")
    print(f"{'':22s}" + ''.join(f'{name:>10s}' for name in sides) + ('  after/before' if 'before' in sides else ''))
    for k in ('bytes_per_env_step', ) + KEYS:
        row = ''.join(f'{medians[name][k]:10.1f}' for name in sides)
        print(f'{k:22s}{row}' + (f"{result['after_over_before'][k]:14.3f}" if 'before' in sides else ''))
    if 'before' in sides:
        print(f"same weights, same steps: {result['same_weights_outputs']}")
    out = os.path.join(ROOT, 'benchmarks', 'results', 'obs_cost.json')
    write_json(out, result)
    print(f'wrote {out}')


if __name__ == '__main__':
    main()
