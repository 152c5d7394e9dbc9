"""Weight averaging (ppo_gobigger/pipeline/learn/averaging.py): the weighted mean against hand-computed values, the
errors a user can cause, and the average of two published agents that went on from the same run playing a game."""
import os

import pytest
import torch

from ppo_gobigger.pipeline.learn.averaging import average_checkpoints, average_state_dicts, mixing_weights
from ppo_gobigger.pipeline.learn.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from test_training import ROOT

PUBLISHED = os.path.join(ROOT, 'benchmarks', 'results', 'checkpoints')
# two committed agents, each 108,000 env steps of PPO on from the same self-play agent (run seed 1)
SIBLINGS = [os.path.join(PUBLISHED, f'st_t2p2_kickstart_selfplay_nokl_{phase}_s1.pth.tar')
            for phase in ('vs_bots_carry_distil_fall', 'vs_level2_carry')]


def test_weighted_mean_against_hand_computed_values():
    a = {'w': torch.tensor([1.0, 2.0]), 'n': torch.tensor(3)}
    b = {'w': torch.tensor([5.0, -2.0]), 'n': torch.tensor(3)}
    averaged = average_state_dicts([a, b], [0.25, 0.75], ['a', 'b'])
    assert torch.equal(averaged['w'], torch.tensor([4.0, -1.0]))  # 0.25 * 1 + 0.75 * 5, 0.25 * 2 - 0.75 * 2
    assert averaged['n'].item() == 3 and averaged['w'].dtype == torch.float32  # a non-float tensor kept as it is
    assert mixing_weights(4, None) == [0.25] * 4


@pytest.mark.parametrize('weights, message', [
    ([0.5], r'1 averaging weights \[0.5\] for 2 checkpoints'),
    ([0.7, 0.7], r'sum to 1, got \[0.7, 0.7\]'),
    ([1.5, -0.5], r'>= 0 and sum to 1'),
])
def test_bad_weights_are_refused(weights, message):
    with pytest.raises(ValueError, match=message):
        mixing_weights(2, weights)
    with pytest.raises(ValueError, match='at least 2 checkpoints, got 1'):
        mixing_weights(1, None)


def test_state_dicts_that_do_not_fit_are_refused():
    a = {'w': torch.zeros(2), 'n': torch.tensor(3)}
    with pytest.raises(CheckpointError, match=r"b and a hold different parameters \(\['v'\]"):
        average_state_dicts([a, {'w': torch.zeros(2), 'n': torch.tensor(3), 'v': torch.zeros(1)}], [0.5, 0.5], 'ab')
    with pytest.raises(CheckpointError, match=r"differ in the shape of \['w'\]"):
        average_state_dicts([a, {'w': torch.zeros(3), 'n': torch.tensor(3)}], [0.5, 0.5], 'ab')
    with pytest.raises(CheckpointError, match='n is not a float tensor and differs'):
        average_state_dicts([a, {'w': torch.zeros(2), 'n': torch.tensor(4)}], [0.5, 0.5], 'ab')


def test_the_average_of_two_siblings_is_a_playable_agent(tmp_path):
    """Two agents trained on from the same run: their mean is written in the published format with the first's
    config, lies between them, and plays a game; a source with other model settings is refused."""
    from ppo_gobigger import evaluate
    out = str(tmp_path / 'average.pth.tar')
    assert average_checkpoints(SIBLINGS, out, [0.25, 0.75]) == [0.25, 0.75]
    average, first, second = (load_checkpoint(path) for path in (out, *SIBLINGS))
    assert set(average) == {'format', 'train_iter', 'envstep', 'config', 'model'}
    assert average['config'] == first['config']
    for key, w in average['model'].items():
        torch.testing.assert_close(w, 0.25 * first['model'][key] + 0.75 * second['model'][key])
    assert evaluate(out, episodes=1)['episode_count'] == 1

    other = dict(second['config'], policy=dict(second['config']['policy'],
                                              model=dict(second['config']['policy']['model'], actor_head='discrete')))
    save_checkpoint(str(tmp_path / 'other.pth.tar'), {'model': second['model']}, 0, 0, other)
    with pytest.raises(CheckpointError, match='other policy.model settings'):
        average_checkpoints([SIBLINGS[0], str(tmp_path / 'other.pth.tar')], out)
