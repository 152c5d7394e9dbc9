"""gobigger-play: a person plays with and against a checkpoint's policy, or watches two checkpoints' teams.

    gobigger-play --ckpt A [--vs B] [--player ID]   you control player ID (default 0); A's policy plays every other
                                                     player, your teammates too; with --vs, B's plays the other teams
    gobigger-play --watch A [--vs B]                 A's team (team 0) against B's (every other team; default A's)
"""
import logging
from typing import Any, Callable, Dict, List, Optional

from ...envs.game import team_num
from ..league.round_robin import load_checkpoints
from .game import ArenaGame, Seat
from .window import Window, check_display

logger = logging.getLogger('ppo_gobigger')


def load_seats(ckpt: str, vs: Optional[str] = None) -> List[Seat]:
    """Seat 'A' (and 'B' with ``vs``) from checkpoint files; CheckpointError naming a file that does not load."""
    seats = []
    for name, path in (('A', ckpt), ('B', vs)):
        if path is not None:
            (participant, ), models = load_checkpoints([path])
            seats.append(Seat(name, models[participant.name], participant.trained_env))
    return seats


def team_seats(seats: List[Seat], human_id: Optional[int], player_num: int, teams: int) -> List[str]:
    """Who plays each team: A plays the person's team (team 0 when watching); B, if given, every other team."""
    ours = 0 if human_id is None else human_id // player_num
    other = seats[-1].name
    return ['A' if t == ours else other for t in range(teams)]


def play(ckpt: str, vs: Optional[str] = None, watch: bool = False, human_id: int = 0, seed: Optional[int] = None,
         frame_limit: Optional[int] = None, speed: float = 1.0, screenshot: Optional[str] = None,
         before_step: Optional[Callable[[ArenaGame], None]] = None) -> Dict[str, Any]:
    """Open a window and play one game to its end (or until the window is closed). Returns {'seed', 'steps',
    'closed', 'standings' (ArenaGame.standings)}.

    ``speed``: game time per real time (1: real time, 0: as fast as it runs). ``screenshot``: save the last frame
    there. ``before_step(game)``: called before each GoBigger step's input is read (scripted input in tests)."""
    check_display()
    seats = load_seats(ckpt, vs)
    preset = seats[0].trained_env['preset']
    G = team_num({'preset': preset})
    if watch:
        human_id = None
    player_num = 1 if human_id is None else _players_per_team(preset)
    game = ArenaGame(seats, team_seats(seats, human_id, player_num, G), human_id=human_id, seed=seed,
                     frame_limit=frame_limit)
    window = Window(game, watch=watch)
    logger.info(f'{preset}, seed {game.seed}: ' + (f'you play player {human_id} (team {human_id // player_num})'
                                                   if human_id is not None else 'watching') +
                f'; {game.total_steps()} steps of {game.step_mul} frames')
    steps_per_second = speed * game.env.server.fps / game.step_mul
    try:
        window.draw()
        while not game.done:
            if before_step is not None:
                before_step(game)
            action = window.read_input()
            if window.closed:
                break
            game.step(action)
            window.draw()
            window.wait(steps_per_second)
        if screenshot is not None:
            window.screenshot(screenshot)
        return dict(seed=game.seed, steps=game.steps, closed=window.closed, standings=game.standings())
    finally:
        window.close()
        game.close()


def format_standings(result: Dict[str, Any]) -> str:
    lines = [f'game seed {result["seed"]}, {result["steps"]} steps' + (' (window closed)' if result['closed'] else '')]
    lines += [f'{r["rank"]}. team {r["team"]} ({r["played_by"]}): {r["score"]:.0f}' for r in result['standings']]
    return '\n'.join(lines)


def _players_per_team(preset: str) -> int:
    import gobigger.configs
    return int(getattr(gobigger.configs, preset)['player_num_per_team'])
