"""The evaluator as a Ray actor (distributed.backend 'ray'): the evaluator envs, the Evaluator and a CPU policy in
eval mode on any machine of the cluster; the driver's RayEvaluator plays each evaluation there with the published
weights, replaces an actor that died and writes the reports to evaluator.jsonl."""
import copy
import logging
from typing import Any, Dict, List

import ray
import torch
from easydict import EasyDict
from ray.exceptions import RayActorError

from ..build import build_policy
from ..play.env_manager import build_env_managers, close_env_manager
from ..play.evaluator import Evaluator, append_report
from .ray_common import MAX_FAILURES_IN_A_ROW, WeightPublisher, close_actors, get

logger = logging.getLogger('ppo_gobigger')


class EvaluatorActor:
    """A Ray actor: the evaluator envs in an env manager, the Evaluator and a CPU policy in eval mode."""

    def __init__(self, cfg: EasyDict, create_cfg: EasyDict) -> None:
        torch.set_num_threads(cfg.policy.torch_threads)  # as RolloutWorker: its process is its own
        cfg = copy.deepcopy(cfg)
        cfg.policy.cuda = False
        _, self._env = build_env_managers(cfg, create_cfg, collect=False)
        policy, self._model = build_policy(cfg, create_cfg, enable_field=['eval'])
        self._env.launch()
        self._evaluator = Evaluator(self._env, policy.eval_mode, cfg.env.n_evaluator_episode, cfg.seed)

    def eval(self, weights: List[ray.ObjectRef], train_iter: int, collector_envstep: int) -> Dict[str, Any]:
        self._model.load_state_dict(ray.get(weights[0]))
        return self._evaluator.eval(train_iter, collector_envstep)

    def close(self) -> None:
        close_env_manager(self._env)


RemoteEvaluator = ray.remote(EvaluatorActor)


class RayEvaluator:
    """The driver's view of the evaluator actor, with Evaluator's interface; the reports go to evaluator.jsonl."""

    def __init__(self, cfg: EasyDict, create_cfg: EasyDict, publisher: WeightPublisher, report_path: str,
                 run_tag: str) -> None:
        self._cfg = cfg
        self._create_cfg = create_cfg
        self._publisher = publisher
        self._report_path = report_path
        self._run_tag = run_tag
        self._incarnation = 0
        self.actor = self._start()
        self.restarts = 0

    def _start(self):
        # no CPU reserved: it plays while the rollout workers wait for the learner
        name = f'evaluator.{self._incarnation}-{self._run_tag}'
        return RemoteEvaluator.options(name=name, num_cpus=0).remote(self._cfg, self._create_cfg)

    def eval(self, train_iter: int, collector_envstep: int) -> Dict[str, Any]:
        failures = 0
        while True:
            try:
                report = get(self.actor.eval.remote([self._publisher.publish()], train_iter, collector_envstep))
                break
            except RayActorError as e:
                failures += 1
                if failures > MAX_FAILURES_IN_A_ROW:
                    raise RuntimeError(f'the evaluator actor died {failures} times in a row; the last: {e}') from e
                logger.warning(f'the evaluator actor died; a new one plays the evaluation again: {e}')
                ray.kill(self.actor, no_restart=True)
                self._incarnation += 1
                self.actor = self._start()
                self.restarts += 1
        append_report(self._report_path, report)
        return report

    def close(self) -> None:
        close_actors([self.actor])
