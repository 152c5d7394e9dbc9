"""Evaluate a saved checkpoint against the opponents and return the evaluator's report with each game's outcome
(optionally with videos)."""
import copy
from typing import Dict, List, Optional

from ..config import compile_config
from ..envs.opponents import POLICY_OPPONENTS
from .learn.checkpoint import check_model_state, load_checkpoint
from .threads import torch_threads
from .play.evaluator import Evaluator
from .play.env_manager import build_env_managers, close_env_manager
from .build import build_policy, set_global_seed


def evaluate(
        ckpt: str,
        main_config: Optional[Dict] = None,
        create_config: Optional[Dict] = None,
        episodes: Optional[int] = None,
        seed: Optional[int] = None,
        overrides: Optional[List[str]] = None,
        replay_dir: Optional[str] = None,
        progress: Optional[bool] = None,
) -> Dict:
    """Evaluate ``ckpt``: the evaluator's report (REPORT_FIELDS) and, under 'games', each game's seed and outcome
    (Evaluator.games). The config defaults to the one stored in the checkpoint; ``main_config`` replaces it.

    ``replay_dir``: save a video of every evaluated game there (GoBigger's playback, one mp4 per game, named
    ``<preset>_seed<game seed>-all.mp4``). ``progress``: show the games played as a bar (None: on a terminal).
    """
    from ..config import apply_overrides

    payload = load_checkpoint(ckpt)
    main_config = copy.deepcopy(main_config if main_config is not None else payload['config'])
    if overrides:
        main_config = apply_overrides(main_config, overrides)
    if episodes is not None:
        main_config['env']['n_evaluator_episode'] = episodes
    if seed is not None:
        main_config['seed'] = seed
    if main_config['env'].get('opponent') in POLICY_OPPONENTS:  # a self-play or league run's evaluations are
        main_config['env']['opponent'] = 'bot'  # against the bots (as its evaluator envs are), stand-ins included
    cfg, create_cfg = compile_config(main_config, create_config)
    if replay_dir is not None:
        cfg.env.evaluator_env_num = even_split_env_num(cfg.env.n_evaluator_episode, cfg.env.evaluator_env_num)
    set_global_seed(cfg.seed)
    policy, model = build_policy(cfg, create_cfg, enable_field=['eval'])
    check_model_state(model, payload['model'], ckpt)
    model.load_state_dict(payload['model'])
    _, evaluator_env = build_env_managers(cfg, create_cfg, collect=False)
    try:
        if replay_dir is not None:
            evaluator_env.enable_save_replay(replay_dir)  # before launch: the managers hand it to each env then
        evaluator_env.launch()
        evaluator = Evaluator(evaluator_env, policy.eval_mode, cfg.env.n_evaluator_episode, cfg.seed,
                              progress=progress)
        with torch_threads(cfg.policy.torch_threads):  # as the in-training evaluations act: the cores to the envs
            report = evaluator.eval(payload['train_iter'], payload['envstep'])
        return dict(report, games=evaluator.games)
    finally:
        close_env_manager(evaluator_env)


def even_split_env_num(n_episode: int, env_num: int) -> int:
    """The most envs (<= env_num) that share n_episode games evenly.

    An env whose quota is done keeps playing until the others finish theirs (see Evaluator.eval). With even
    quotas and GoBigger's fixed game length the envs finish their last counted games within a few steps of each
    other, long before an uncounted game could end and write a video.
    """
    return max(k for k in range(1, min(n_episode, env_num) + 1) if n_episode % k == 0)
