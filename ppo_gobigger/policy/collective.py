"""What a PPO update shares with the other ranks of a torchrun launch; nothing outside a process group.

Every rank learns on its own rollout in minibatches of batch_size / world_size env steps and applies the same
update: each minibatch's gradients are averaged over the ranks and the value-norm statistics are pooled over every
rank's returns, so the ranks' parameters stay identical (pipeline/distributed/torchrun.py starts the ranks).
"""
from typing import Iterable, Tuple

import torch
import torch.distributed as dist

from .ppo_math import local_moments


def is_distributed() -> bool:
    """True in a process group of more than one rank."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def average_gradients(parameters: Iterable[torch.nn.Parameter]) -> None:
    """Replace each gradient by its mean over the ranks (one all-reduce of all gradients); nothing in one process.

    A parameter without a gradient counts as a zero gradient, so that every rank reduces the same tensor.
    """
    if not is_distributed():
        return
    params = [p for p in parameters if p.requires_grad]
    flat = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) for p in params])
    dist.all_reduce(flat)
    flat /= dist.get_world_size()
    offset = 0
    for p in params:
        mean = flat[offset:offset + p.numel()].view_as(p)
        if p.grad is None:
            p.grad = mean.clone()
        else:
            p.grad.copy_(mean)
        offset += p.numel()


def pooled_moments(x: torch.Tensor) -> Tuple[int, torch.Tensor, torch.Tensor]:
    """(count, mean, variance) of the values of x, float64, over the x of every rank when distributed."""
    if not is_distributed():
        return local_moments(x)
    x = x.detach().double().flatten()
    count_and_sum = torch.stack([x.new_tensor(float(x.numel())), x.sum()])
    dist.all_reduce(count_and_sum)
    count, mean = count_and_sum[0], count_and_sum[1] / count_and_sum[0]
    squares = (x - mean).pow(2).sum()
    dist.all_reduce(squares)
    return int(count), mean, squares / count
