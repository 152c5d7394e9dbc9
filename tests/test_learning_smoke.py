"""Learning smoke test: a short PPO run on fixed seeds must clearly beat its own untrained start.

The setting is small: st_t2p2 games of 400 frames (50 decisions) in which every player starts with a score of 1,000
instead of 13,000 (below the 3,200 a player needs to eject and the 3,600 to split: the team's score grows by what it
eats), against the fixed random opponent, one process, a model of hidden size 32, 4,800 env steps of PPO (12
iterations) on one learner thread, so that the updates are the same on any machine; about 16 s of pytest.

The measure is our team's score gain in a game (its final score minus the 2 x 1,000 it starts with: the food and
balls it ate), the mean over the same 8 held-out games played greedily: the run's evaluation before its first update
(the untrained weights of the same seed) and its final one. The trained gain must be at least twice the untrained
one. Measured (2026-12-06; untrained -> trained gain): seed 0, the seed below, 812 -> 3,692 (4.5x); seeds 1-5: 4.1x,
5.9x, 5.7x, 11.0x, 3.4x. The greedy score ratio against
the random players (whose score starts at the same 2,000) is not the measure: it moved 1.9-2.7x over those 6 seeds.

With the advantage's sign flipped (gobigger_ppo.py, ``advantage = -gae(...)``) this test fails: seed 0's gain went
812 -> 862 (1.1x). Seeds 1-3 and 5 flipped: 0.5-1.6x; seed 4, whose untrained
team ate least (325), reached 6.2x flipped: a seed with so low a start would not tell the two apart.
"""
import json

from ppo_gobigger import train
from ppo_gobigger.cli import BOTS_CONFIG  # the default's settings against the bots; the opponent is set below
from ppo_gobigger.config import apply_overrides, load_config_file

SEED = 0
MAX_ENV_STEP = 4800  # 12 PPO iterations of n_sample env steps
SCORE_INIT = 1000  # each player's score at the start (the preset's 13,000 leaves food a 1% gain)
TEAM_START = 2 * SCORE_INIT  # st_t2p2: 2 players a team
SETTING = [
    'env.preset="st_t2p2"',
    'env.custom_cfg.frame_limit=400',  # 50 env steps a game at 4 GoBigger steps (8 frames) a decision
    f'env.custom_cfg.manager_settings.player_manager.ball_settings.score_init={SCORE_INIT}',
    'env.opponent="random"',  # the fixed opponent: a seeded uniformly random action per player and step
    'env.action_repeat=4',
    'env.reward="log_score"',
    'env.team_spirit=0.0',  # each player paid for its own score: the quicker lesson here
    'env.manager.type="base"',  # one process: faster than subprocess envs on one core
    'env.collector_env_num=2',
    'env.evaluator_env_num=2',
    'env.n_evaluator_episode=8',
    'policy.model.hidden_size=32',
    'policy.collect.n_sample=400',  # 4 whole games per iteration
    'policy.learn.batch_size=100',
    'policy.learn.epoch_per_collect=8',
    'policy.learn.learning_rate=0.002',
    'policy.learn.discount_factor=0.99',
    'policy.learn.gae_lambda=0.8',
    'policy.learn.entropy_weight=0.005',
    f'policy.eval.evaluator.eval_freq={MAX_ENV_STEP}',  # two evaluations: untrained (env step 0) and final
    'policy.learn.torch_threads=1',  # one learner thread: the same updates however many cores the machine has
]


def smoke_config(exp_dir, *extra):
    main_config, create_config = load_config_file(BOTS_CONFIG)
    return apply_overrides(main_config, SETTING + [f'exp_name={str(exp_dir)!r}', *extra]), create_config


def score_gain(report) -> float:
    """Our team's mean score gain over a game: the food (and other balls) it ate, less what it lost."""
    return report['final_score_mean'] - TEAM_START


def test_a_short_ppo_run_at_least_doubles_the_score_its_team_gains(tmp_path):
    main_config, create_config = smoke_config(tmp_path)
    _, final = train(main_config, create_config, seed=SEED, max_env_step=MAX_ENV_STEP, progress=False)
    with open(tmp_path / 'evaluator.jsonl') as f:
        reports = [json.loads(line) for line in f]
    untrained = reports[0]
    # the same 8 held-out games, before any update and after the last one
    assert [r['collector_envstep'] for r in reports] == [0, MAX_ENV_STEP] and reports[-1] == final
    assert untrained['train_iter'] == 0 and final['train_iter'] > 0
    assert untrained['episode_count'] == final['episode_count'] == 8
    before, after = score_gain(untrained), score_gain(final)
    assert before > 0  # the untrained team eats something: doubling it is a real bar
    assert after >= 2 * before, (
        f'the trained team gained {after:.0f} a game, less than twice the untrained {before:.0f} '
        f'(score ratio {untrained["score_ratio_median"]:.2f} -> {final["score_ratio_median"]:.2f})')
