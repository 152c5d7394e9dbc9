"""Fixtures shared across test files."""
import pytest
import torch


@pytest.fixture(scope='session')
def trained(tmp_path_factory):
    """One small training run of the whole session (test_training.SMALL: 4 PPO iterations of 256 env steps, three
    evaluations), for the tests that only read a trained run's outputs: (experiment folder, last evaluator report).
    Tests that write must write elsewhere (tmp_path)."""
    from ppo_gobigger import train
    from test_training import small_config
    exp_dir = tmp_path_factory.mktemp('exp')
    main_config, create_config = small_config(exp_dir)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        _, report = train(main_config, create_config, seed=0)
        assert torch.get_num_threads() == 2  # the run acted on policy.torch_threads and gave the caller's count back
    finally:
        torch.set_num_threads(before)
    return exp_dir, report
