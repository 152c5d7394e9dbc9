from setuptools import find_packages, setup

setup(
    name='ppo_gobigger',
    version='0.1.0',
    description='Multi-agent PPO for GoBigger 0.2 in DI-engine style',
    long_description=open('README.md').read() if __import__('os').path.exists('README.md') else '',
    long_description_content_type='text/markdown',
    packages=find_packages(include=['ppo_gobigger', 'ppo_gobigger.*']),
    python_requires='>=3.8',
    install_requires=[
        'torch>=2.0,<3',
        'gobigger>=0.2.1,<0.3',
        'DI-engine>=0.5.3,<0.6',  # pipeline/play/env_manager.py overrides the managers' private internals
        'easydict',
        'numpy',
        'gym',  # DI-engine's BaseEnv is a gym.Env; spaces are gym spaces
        'tabulate',  # the evaluator's table
        'trueskill',  # the league tool's ratings (DI-engine requires it too)
        'tqdm',  # the training progress bar
        'tensorboardX',  # TensorBoard scalars (DI-engine's choice too)
        'matplotlib>=3.7',  # the learning-curve and league PNGs (3.7: legends outside the axes)
        'opencv-python',  # reading replays back; GoBigger writes them with it (and requires this non-headless build)
    ],
    extras_require={
        'test': ['pytest', 'tensorboard'],  # tensorboard: the tests read the event files back with its loader
        'ray': ['ray>=2.9'],  # distributed.backend='ray': rollout workers as Ray actors (docs/scaling.md)
    },
    entry_points={
        'console_scripts': [
            'gobigger-train=ppo_gobigger.cli:train_main',
            'gobigger-eval=ppo_gobigger.cli:eval_main',
            'gobigger-league=ppo_gobigger.cli:league_main',
            'gobigger-play=ppo_gobigger.cli:play_main',
            'gobigger-ding=ppo_gobigger.cli:ding_main',
        ],
    },
)
