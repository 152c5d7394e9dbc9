"""The window of gobigger-play: GoBigger's own renderers and its human-play controls (gobigger/bin/play.py).

    a person plays   the player's own view (GoBigger's RealtimePartialRender), centred on its balls
    watching         the whole map (GoBigger's RealtimeRender) with the leaderboard

Controls (as GoBigger's play.py): the mouse steers (direction from the window's centre to the pointer); Q ejects a
spore, W splits; Esc or closing the window ends the game.
"""
import os
from typing import List, Optional, Tuple

SCREEN = 512  # window side, pixels (GoBigger's renderers' default)


class DisplayError(RuntimeError):
    """No window can open here."""


def check_display() -> None:
    """A clear error where no window can open (no X or Wayland display and no SDL video driver chosen)."""
    if not (os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY') or os.environ.get('SDL_VIDEODRIVER')):
        raise DisplayError('no display to open a window on (DISPLAY is not set); play on a desktop, or run headless '
                           'with SDL_VIDEODRIVER=dummy and --screenshot PATH')


class Window:
    """One pygame window showing an ArenaGame and reading the person's input."""

    def __init__(self, game, watch: bool) -> None:
        """``watch``: the whole map; else the view of the game's human player."""
        driver = os.environ.get('SDL_VIDEODRIVER')
        from gobigger.render import RealtimePartialRender, RealtimeRender
        import pygame
        self._pygame = pygame
        self._game = game
        self._watch = watch
        width, height = game.global_state['border']
        # GoBigger's BaseRender sets SDL_VIDEODRIVER=dummy on every Linux after pygame.init(): put the user's back
        self._render = (RealtimeRender(SCREEN, SCREEN, map_width=width, map_height=height) if watch
                        else RealtimePartialRender(SCREEN, SCREEN))
        _restore_env('SDL_VIDEODRIVER', driver)
        pygame.display.set_caption(f'GoBigger {game.preset}, seed {game.seed}' + ('' if watch else ': you play '
                                   f'player {game.human_id} (mouse steers, Q eject, W split, Esc quits)'))
        self._pointer: Tuple[float, float] = (SCREEN / 2, SCREEN / 2)
        self._clock = pygame.time.Clock()
        self.closed = False

    def read_input(self) -> Optional[List]:
        """The person's GoBigger action [x, y, action_type] from the events since the last call (None when watching);
        sets ``closed`` on Esc or the window's close button."""
        pygame = self._pygame
        action_type = 0
        for event in pygame.event.get():
            if event.type == pygame.QUIT or (event.type == pygame.KEYDOWN and event.key == pygame.K_ESCAPE):
                self.closed = True
            elif event.type == pygame.MOUSEMOTION:
                self._pointer = event.pos
            elif event.type == pygame.KEYDOWN and event.key == pygame.K_q:
                action_type = 1  # eject
            elif event.type == pygame.KEYDOWN and event.key == pygame.K_w:
                action_type = 2  # split
        if self._watch:
            return None
        # GoBigger's play.py: the pointer's offset from the centre, a quarter of the screen = 1
        x = (self._pointer[0] - SCREEN / 2) / (SCREEN / 4)
        y = (self._pointer[1] - SCREEN / 2) / (SCREEN / 4)
        return [x, y, action_type]

    def draw(self) -> None:
        game = self._game
        A = game.player_num
        if self._watch:
            server = game.env.server
            self._render.fill(server.food_manager.get_balls(), server.thorns_manager.get_balls(),
                              server.spore_manager.get_balls(), server.player_manager.get_players(), A,
                              leaderboard=game.global_state['leaderboard'])
        else:
            fps = round(self._clock.get_fps())
            self._render.fill(game.global_state, game.player_states[game.human_id], player_num_per_team=A, fps=fps)
        self._render.show()

    def wait(self, steps_per_second: float) -> None:
        """Hold the pace (0: as fast as the game runs)."""
        self._clock.tick(steps_per_second if steps_per_second > 0 else 0)

    def screenshot(self, path: str) -> None:
        """Save the window's last frame (PNG by the file's extension)."""
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self._pygame.image.save(self._render.screen, path)

    def close(self) -> None:
        self._pygame.quit()


def _restore_env(key: str, value: Optional[str]) -> None:
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value
