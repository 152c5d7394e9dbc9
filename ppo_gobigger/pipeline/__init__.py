"""The training pipeline: what plays the games, what learns from them, where they run, and what the user sees.

    build.py        the policy and model from a config, the seeds, a usable experiment folder
    progress.py     progress of a long phase: a bar on a terminal, a log line every 30 s elsewhere
    interrupt.py    Ctrl+C / SIGTERM stop a run at a safe point
    play/           games with a policy: env managers, the rollout collector, the evaluator
    learn/          learning from games: the learner, checkpoints
    distributed/    where the games run: local env managers, Ray actors, torchrun ranks (config ``distributed``)
    evaluate.py     evaluate(): a saved checkpoint's games
    arena/          a person playing with and against checkpoints in a window, or watching them (gobigger-play)
    monitor/        what a run shows and writes: progress bar, TensorBoard, CSV, learning curve
    serial.py       train(): the training loop over all of the above

Each group imports only the groups above it in this list (tests/test_layout.py). A new job gets a module or a
group of its own (league play: a league/ group beside play/), not a branch inside an existing file.
"""
