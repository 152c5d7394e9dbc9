"""The league's pool (env.opponent 'league'): who plays the other teams of a training game, and how often we win.

Members are the bot levels of ``league.bot_levels`` and snapshots of the learning policy: its weights join the pool
every ``league.snapshot_every`` PPO iterations, as weights-only checkpoints
``<exp>/league/snapshot_<train_iter>.pth.tar`` (the format of a published agent: ``gobigger-eval --ckpt`` and
``gobigger-league`` play them). Each game draws one
opponent per other team: the current weights with probability ``league.self_play``, otherwise a member drawn by
prioritised fictitious self-play (PFSP): weight (1 - p) ** PFSP_POWER, p = (wins + 1) / (games + 2) our win rate
against the member, one won and one lost game as prior; members that beat us come often, members we always beat
rarely (never quite 0).

A draw depends on nothing that the envs' timing decides, so that a run repeats from its seed (on either engine): the
draw for env i's game number g (the games it played before) takes its random numbers from a generator seeded with
(seed, i, g), sees the snapshots taken before the PPO iteration that ended with game g - 1, and weighs the members by
the games numbered g - 2 and lower. Which of the other envs' games have ended, or been drawn, when env i's next game
is drawn (the collector reads a new game's first observation while other envs still play) changes none of them:
with whole-game rollouts (every env plays one game per rollout) all games numbered g - 2 have ended and the
snapshot that follows the rollout of games g - 1 is not yet in any draw of game g.

The pool's state (its members, their games and our wins against them, the results not yet counted, the PPO
iterations so far, each env's games) goes into every training checkpoint, so that ``--resume`` goes on with the pool
exactly as it was then (snapshot files are taken from the resumed run's league folder); a member whose file no longer
loads is an error naming it. ``<exp>/league/pool.json`` shows the same state after every iteration, for reading.
"""
import os
import shutil
from dataclasses import asdict, dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from ...files import write_json
from ..learn.checkpoint import CheckpointError, check_model_state, load_checkpoint, save_checkpoint

POOL_FILE = 'pool.json'
PFSP_POWER = 2.0  # the PFSP weight's exponent: 0 would draw uniformly, larger favours the members that beat us


@dataclass
class Member:
    """One pool member: a bot level (``bot_level`` > 0) or a snapshot of our weights (``path``)."""
    name: str  # 'bot_level_3', 'snapshot_1200' (the snapshot's train_iter)
    bot_level: int = 0
    path: Optional[str] = None  # a snapshot's checkpoint file, in the pool's folder
    train_iter: int = 0
    envstep: int = 0
    games: int = 0  # counted games (g - 2 and lower, above) in which this member played one of the other teams
    wins: int = 0  # of those, games in which our team finished above it
    first_game: int = 0  # a snapshot is drawn for games numbered this and higher

    @property
    def win_rate(self) -> float:
        """Our win rate against the member with one won and one lost game as prior (0.5 before any game)."""
        return (self.wins + 1) / (self.games + 2)


class LeaguePool:

    def __init__(self, folder: str, league_cfg: Dict, build_model: Callable[[], torch.nn.Module], seed: int,
                 device: str = 'cpu') -> None:
        """A new pool of the bot levels (``restore`` continues a saved one).

        Arguments:
            folder: where the snapshots and pool.json live (``<exp>/league``).
            league_cfg: the config's ``league`` section.
            build_model: a new model of the run's ``policy.model`` settings (snapshots are loaded into it).
            seed: seeds the draws.
            device: where the snapshots' models live.
        """
        self.folder = folder
        self._cfg = league_cfg
        self._build_model = build_model
        self._device = device
        self._seed = seed
        self._models: Dict[str, torch.nn.Module] = {}  # snapshot name -> its model, loaded once
        self.iterations = 0  # PPO iterations of the run so far
        self.members: List[Member] = [Member(f'bot_level_{k}', bot_level=k) for k in league_cfg['bot_levels']]
        self.games_ended: Dict[int, int] = {}  # env id -> its games ended (and so the number of its next game)
        self.pending: List[Tuple[int, List[Optional[str]], List[bool]]] = []  # (game, member names, won): uncounted
        os.makedirs(folder, exist_ok=True)
        self.save()

    def state(self) -> Dict:
        """The pool as plain data (for a checkpoint): iterations, members with their games, each env's games ended,
        the results not yet counted."""
        return {'iterations': self.iterations, 'members': [asdict(m) for m in self.members],
                'games_ended': dict(self.games_ended), 'pending': [list(p) for p in self.pending]}

    def restore(self, state: Dict, source_folder: str) -> None:
        """Go on with a saved pool; its snapshot files are in ``source_folder`` (copied here if it is another)."""
        self.iterations = state['iterations']
        self.members = [Member(**m) for m in state['members']]
        # (a pool saved before draws were keyed by game has neither: its games then count from 0)
        self.games_ended = {int(i): n for i, n in state.get('games_ended', {}).items()}
        self.pending = [(game, list(names), list(won)) for game, names, won in state.get('pending', [])]
        self._models = {}
        for member in self.members:
            if member.path is None:
                continue
            here, there = os.path.join(self.folder, member.path), os.path.join(source_folder, member.path)
            if not os.path.exists(here) and os.path.exists(there):
                shutil.copyfile(there, here)
            self.model(member)  # a member that no longer loads fails now, not in the middle of a game
        self.save()

    def on_iteration(self, model: torch.nn.Module, train_iter: int, envstep: int, config: Dict) -> Optional[Member]:
        """Count a PPO iteration; every ``snapshot_every``-th adds the current weights. Returns the new member."""
        self.iterations += 1
        member = None
        if self.iterations % self._cfg['snapshot_every'] == 0:
            member = self.add_snapshot(model, train_iter, envstep, config)
        self.save()
        return member

    def add_snapshot(self, model: torch.nn.Module, train_iter: int, envstep: int, config: Dict) -> Member:
        name = f'snapshot_{train_iter}'
        path = os.path.join(self.folder, f'{name}.pth.tar')
        weights = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        save_checkpoint(path, {'model': weights}, train_iter, envstep, config)
        # drawn from the games after those of the next rollout (whose draws may already be made: see above)
        member = Member(name, path=os.path.basename(path), train_iter=train_iter, envstep=envstep,
                        first_game=self.iterations + 1)
        self.members = [m for m in self.members if m.name != name] + [member]
        return member

    def weights(self, members: Optional[Sequence[Member]] = None) -> np.ndarray:
        """(members,) the probability of drawing each of ``members`` (default: all) when the current weights are
        not drawn."""
        members = self.members if members is None else members
        raw = np.array([(1.0 - m.win_rate) ** PFSP_POWER for m in members])
        return raw / raw.sum()

    def draw(self, teams: int, env_id: int) -> List[Optional[Member]]:
        """Opponents for the ``teams`` other teams of env ``env_id``'s next game; None = the current weights."""
        game = self.games_ended.get(env_id, 0)
        self._count(up_to=game - 2)
        rng = np.random.default_rng((self._seed, env_id, game))
        members = [m for m in self.members if m.first_game <= game]
        drawn = []
        for _ in range(teams):
            if not members or rng.random() < self._cfg['self_play']:
                drawn.append(None)
            else:
                drawn.append(members[rng.choice(len(members), p=self.weights(members))])
        return drawn

    def record(self, env_id: int, members: Sequence[Optional[Member]], won: Sequence[bool]) -> None:
        """Env ``env_id``'s game ended: ``won[g]`` says whether our team finished above the team member
        ``members[g]`` played (None: the current weights, not counted). Counted from the draws of game + 2 on."""
        game = self.games_ended.get(env_id, 0)
        self.pending.append((game, [None if m is None else m.name for m in members], [bool(w) for w in won]))
        self.games_ended[env_id] = game + 1

    def abandon(self, env_id: int) -> None:
        """Env ``env_id``'s game ended without an outcome (a fault): its next game has the next number."""
        self.games_ended[env_id] = self.games_ended.get(env_id, 0) + 1

    def _count(self, up_to: int) -> None:
        """Count the pending results of the games numbered ``up_to`` and lower into the members' games and wins."""
        by_name = {m.name: m for m in self.members}
        keep = []
        for game, names, won in self.pending:
            if game > up_to:
                keep.append((game, names, won))
                continue
            for name, w in zip(names, won):
                if name is not None:
                    by_name[name].games += 1
                    by_name[name].wins += int(w)
        self.pending = keep

    def model(self, member: Member) -> torch.nn.Module:
        """The model of a snapshot member (loaded as weights only, once)."""
        if member.name not in self._models:
            path = os.path.join(self.folder, member.path)
            payload = load_checkpoint(path)
            if 'model' not in payload:
                raise CheckpointError(f'league member {member.name}: {path} holds no model weights')
            model = self._build_model()
            check_model_state(model, payload['model'], path)
            model.load_state_dict(payload['model'])
            self._models[member.name] = model.to(self._device).eval()
        return self._models[member.name]

    def save(self) -> None:
        """Write pool.json atomically."""
        state = {'iterations': self.iterations, 'members': [asdict(m) for m in self.members]}  # for reading
        write_json(os.path.join(self.folder, POOL_FILE), state, indent=1)

    def table(self) -> List[Dict]:
        """The members with their games, our wins and their current draw weight: for the log."""
        weights = self.weights() if self.members else []
        return [dict(name=m.name, games=m.games, wins=m.wins, weight=float(w)) for m, w in zip(self.members, weights)]
