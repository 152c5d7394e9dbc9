"""What a training run shows and writes besides its checkpoints: the progress bar, TensorBoard scalars and the
evaluator CSV (training.py), the learning-curve PNG (learning_curve.py) and videos of new best checkpoints
(replays.py)."""
