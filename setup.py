from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

# The fast engine's hot modules, compiled from their own source (Cython's pure-Python mode; not built, env.engine
# 'fast' falls back to stock). Their arithmetic must stay IEEE double, operation for operation, to play stock
# GoBigger's game bit for bit: no -ffast-math, no fused multiply-add (-ffp-contract=off; GCC fuses where the CPU can).
ENGINE_EXTENSIONS = [Extension(f'ppo_gobigger.envs.engine.{name}', [f'ppo_gobigger/envs/engine/{name}.py'],
                               extra_compile_args=['-ffp-contract=off']) for name in ('balls', 'collision')]

setup(
    name='ppo_gobigger',
    version='0.1.0',
    description='Multi-agent PPO for GoBigger 0.2 in DI-engine style',
    long_description=open('README.md').read() if __import__('os').path.exists('README.md') else '',
    long_description_content_type='text/markdown',
    packages=find_packages(include=['ppo_gobigger', 'ppo_gobigger.*']),
    ext_modules=cythonize(ENGINE_EXTENSIONS, compiler_directives=dict(language_level=3)),
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
        'Cython>=3.0',  # the engine's source imports its pure-Python-mode annotations (compiled by setup above)
        'opencv-python',  # reading replays back; GoBigger writes them with it (and requires this non-headless build)
    ],
    extras_require={
        # tensorboard: the tests read the event files back with its loader; psutil: benchmarks/throughput.py's CPU times
        'test': ['pytest', 'tensorboard', 'psutil'],
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
