"""The training pipeline: collector, learner and evaluator over DI-engine env managers, and the serial loop."""
