"""Tests for the shared encoder and the multi-agent actor-critic (ppo_gobigger.model)."""
import pytest
import torch
from ding.utils import MODEL_REGISTRY

from ppo_gobigger.envs.actions import ACTION_NUM, ACTION_TABLE, EJECT, MOVE_DIRECTIONS, SPLIT
from ppo_gobigger.envs.features import CLONE_EATER, MASK_KEYS, MAX_CLONE, MAX_THORN, OBS_SHAPES
from ppo_gobigger.model import GoBiggerPPOModel
from ppo_gobigger.model.heads import DirectionalHead

MODES = ('compute_actor', 'compute_critic', 'compute_actor_critic')


def padding_masks(inputs):
    """key -> bool tensor, True where that key's entry is padding (an invalid clone, or an invalid thorn)."""
    clone, thorn = inputs['clone_mask'].bool(), inputs['thorn_mask'].bool()  # (B, A, C), (B, A, K)
    return {
        'clone': ~clone,  # (B, A, C)
        'food_relation': ~clone,  # (B, A, C)
        'thorn': ~thorn,  # (B, A, K)
    }


def make_inputs(B, A, seed=0, all_masked=False):
    """A random valid observation: each player sees 1..C-1 clones and 1..K-1 thorns (nearest first), padding zero."""
    g = torch.Generator().manual_seed(seed)
    inputs = {
        k: torch.randn(B, A, *shape, generator=g)
        for k, shape in OBS_SHAPES.items() if k not in MASK_KEYS
    }
    n_clone = torch.randint(1, MAX_CLONE, (B, A, 1), generator=g)
    n_thorn = torch.randint(1, MAX_THORN, (B, A, 1), generator=g)
    inputs['clone_mask'] = torch.arange(MAX_CLONE) < n_clone  # (B, A, C)
    inputs['thorn_mask'] = torch.arange(MAX_THORN) < n_thorn  # (B, A, K)
    if all_masked:
        inputs['clone_mask'][:] = False
        inputs['thorn_mask'][:] = False
    for k, pad in padding_masks(inputs).items():
        inputs[k][pad] = 0.
    return inputs


def fill_padding_with_garbage(inputs, seed=1):
    g = torch.Generator().manual_seed(seed)
    out = {k: v.clone() for k, v in inputs.items()}
    for k, pad in padding_masks(inputs).items():
        out[k][pad] = 100. * torch.randn(out[k][pad].shape, generator=g)
    return out


@pytest.fixture
def model():
    torch.manual_seed(0)
    return GoBiggerPPOModel()


def assert_outputs_close(a, b, atol=1e-6):
    assert a.keys() == b.keys()
    for k in a:
        assert torch.allclose(a[k], b[k], atol=atol), k


@pytest.mark.parametrize('A', [2, 3])
def test_output_shapes(model, A):
    B = 3
    x = make_inputs(B, A)
    assert model(x, 'compute_actor')['logit'].shape == (B, A, ACTION_NUM)
    assert model(x, 'compute_critic')['value'].shape == (B, A)
    out = model(x, 'compute_actor_critic')
    assert out['logit'].shape == (B, A, ACTION_NUM) and out['value'].shape == (B, A)


def test_extra_leading_dims(model):
    T, B, A = 2, 3, 2
    x = {k: v.unsqueeze(0).expand(T, *v.shape) for k, v in make_inputs(B, A).items()}
    out = model(x, 'compute_actor_critic')
    assert out['logit'].shape == (T, B, A, ACTION_NUM) and out['value'].shape == (T, B, A)


def test_actor_critic_matches_separate_modes(model):
    x = make_inputs(3, 2)
    both = model(x, 'compute_actor_critic')
    assert torch.allclose(both['logit'], model(x, 'compute_actor')['logit'])
    assert torch.allclose(both['value'], model(x, 'compute_critic')['value'])


def test_padding_cannot_change_output(model):
    x = make_inputs(4, 2)
    assert not all(m.all() for m in (x['clone_mask'], x['thorn_mask']))  # there is padding to fill
    ref = model(x, 'compute_actor_critic')
    assert_outputs_close(ref, model(fill_padding_with_garbage(x), 'compute_actor_critic'))


def test_float_masks_match_bool_masks(model):
    x = make_inputs(3, 2)
    x_float = {k: (v.float() if k in MASK_KEYS else v) for k, v in x.items()}
    assert_outputs_close(model(x, 'compute_actor_critic'), model(x_float, 'compute_actor_critic'))


@pytest.mark.parametrize('key', ['clone', 'food_relation', 'thorn', 'scalar', 'food'])
def test_valid_entries_do_change_output(model, key):
    """The counterpart of the padding test: the same kind of edit on valid entries must show."""
    x = make_inputs(4, 2)
    ref = model(x, 'compute_actor_critic')
    y = {k: v.clone() for k, v in x.items()}
    valid = ~padding_masks(x)[key] if key in padding_masks(x) else ...  # scalar and food have no padding
    y[key][valid] += torch.randn(y[key][valid].shape)
    out = model(y, 'compute_actor_critic')
    assert not torch.allclose(ref['logit'], out['logit'], atol=1e-6)
    assert not torch.allclose(ref['value'], out['value'], atol=1e-6)


def test_eat_keys_reach_the_output(model):
    """Channels CLONE_EATER / CLONE_PREY feed only the relations' eat tests: flipping who can eat whom must show."""
    x = make_inputs(4, 2)
    ref = model(x, 'compute_actor_critic')
    y = {k: v.clone() for k, v in x.items()}
    valid = x['clone_mask']  # (B, A, C)
    y['clone'][..., CLONE_EATER][valid] = 1e3  # every valid clone eats every clone and thorn
    out = model(y, 'compute_actor_critic')
    assert not torch.allclose(ref['logit'], out['logit'], atol=1e-6)


def test_parameters_keep_the_shapes_of_checkpoints_from_before_the_relations_moved():
    """The relations moved from the env into the model without changing a parameter: older checkpoints still load.
    Shapes as GoBiggerPPOModel(actor_head='directional') had at commit b915a16 (41 tensors, 81,637 parameters), the
    model of every zoo agent."""
    model = GoBiggerPPOModel()
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert shapes['encoder.clone_mlp.0.weight'] == (64, 17)
    assert shapes['encoder.pair_rel_fc.weight'] == (32, 7)
    assert shapes['encoder.thorn_fc.weight'] == (32, 6)
    assert (len(shapes), sum(v.numel() for v in model.state_dict().values())) == (41, 81637)


def test_all_masked_is_finite(model):
    zeros = make_inputs(3, 2, all_masked=True)
    x = fill_padding_with_garbage(zeros)
    out = model(x, 'compute_actor_critic')
    assert all(torch.isfinite(v).all() for v in out.values())
    assert_outputs_close(out, model(zeros, 'compute_actor_critic'))  # nothing of the padding reaches the output
    (out['logit'].sum() + out['value'].sum()).backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_observation_of_an_older_layout_raises(model):
    """Observations with the pair tensors the env sent before the relations moved into the model (no 'thorn')."""
    x = make_inputs(1, 2)
    x['thorn_relation'] = torch.zeros(1, 2, MAX_CLONE, MAX_THORN, 6)
    del x['thorn']
    with pytest.raises(KeyError, match=r"lacks \['thorn'\]"):
        model(x, 'compute_actor_critic')


def test_unknown_mode_raises(model):
    with pytest.raises(ValueError, match='compute_q'):
        model(make_inputs(1, 2), 'compute_q')


def test_gradients_reach_every_parameter(model):
    out = model(make_inputs(8, 2), 'compute_actor_critic')
    (out['logit'].pow(2).sum() + out['value'].pow(2).sum()).backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_critic_is_centralised_actor_is_not(model):
    x = make_inputs(3, 2, seed=0)
    other = make_inputs(3, 2, seed=5)
    y = {k: v.clone() for k, v in x.items()}
    for k in y:
        y[k][:, 1] = other[k][:, 1]  # replace player 1's whole view
    assert not torch.allclose(model(x, 'compute_critic')['value'][:, 0], model(y, 'compute_critic')['value'][:, 0])
    assert torch.allclose(model(x, 'compute_actor')['logit'][:, 0], model(y, 'compute_actor')['logit'][:, 0], atol=1e-6)


def test_registered_and_initialised():
    assert MODEL_REGISTRY.get('gobigger_ppo') is GoBiggerPPOModel
    torch.manual_seed(0)
    model = GoBiggerPPOModel()
    logit = model(make_inputs(8, 2), 'compute_actor')['logit']
    assert logit.abs().max() < 0.1  # gain 0.01 on the policy's last layer: a near-uniform first policy


def test_pair_max_matches_the_dense_pool():
    """The pool with autograd through the winners only equals the dense one (a linear layer on every pair, -inf at
    padded partners, Tensor.max) in value and in every gradient, with and without autograd, including a row with no
    valid partner (-> -inf)."""
    from ppo_gobigger.model.encoder import pair_max
    g = torch.Generator().manual_seed(0)
    fc = torch.nn.Linear(7, 3)
    rel = torch.randn(5, 6, 4, 7, generator=g)  # (N, C, M, F), pooled over the M partners
    partner = torch.randn(5, 4, 3, generator=g, requires_grad=True)  # (N, M, R)
    valid = torch.rand(5, 4, generator=g) > 0.3
    valid[0] = False  # a player with no valid partner
    padded = lambda: partner.masked_fill(~valid.unsqueeze(-1), float('-inf'))  # noqa: E731

    dense = (fc(rel) + padded().unsqueeze(1)).max(dim=2).values  # (N, C, R)
    weights = torch.randn(dense.shape, generator=g)
    reference = torch.autograd.grad((dense.relu() * weights).sum(), [fc.weight, fc.bias, partner])
    pooled = pair_max(fc, rel, padded())
    assert torch.allclose(pooled, dense, atol=1e-6) and torch.isneginf(pooled[0]).all()
    gradients = torch.autograd.grad((pooled.relu() * weights).sum(), [fc.weight, fc.bias, partner])
    for a, b in zip(gradients, reference):
        assert torch.allclose(a, b, atol=1e-5)
    with torch.no_grad():
        assert torch.allclose(pair_max(fc, rel, padded()), dense, atol=1e-6)


def test_used_slots():
    from ppo_gobigger.model.encoder import used_slots
    mask = torch.tensor([[True, False, False, False], [False, False, True, False]])
    assert used_slots(mask) == 3
    assert used_slots(torch.zeros(2, 4, dtype=torch.bool)) == 1


def test_batch_trimming_matches_per_sample_outputs(model):
    """Trimming slots unused in the batch must not change any sample's output: a sample evaluated inside a batch
    whose other rows use all C slots gives the same output as evaluated alone (where more slots are cut)."""
    inputs = make_inputs(6, 2, seed=3)
    inputs['clone_mask'][0], inputs['thorn_mask'][0] = False, False  # sample 0: only its first clone / thorn
    inputs['clone_mask'][0, :, 0], inputs['thorn_mask'][0, :, 0] = True, True
    inputs['clone_mask'][1] = True  # sample 1: every slot used
    inputs['thorn_mask'][1] = True
    batch = model(inputs, 'compute_actor_critic')
    alone = model({k: v[:1] for k, v in inputs.items()}, 'compute_actor_critic')
    assert_outputs_close({k: v[:1] for k, v in batch.items()}, alone, atol=1e-5)


def test_directional_head_peaks_at_the_heading():
    """Move logits are <u_k, v>: the most likely move is the table direction nearest to the heading v, the logits
    fall off as the cosine of the angle to it, and eject and split have logits of their own."""
    torch.manual_seed(0)
    head = DirectionalHead(8)
    emb = torch.randn(5, 2, 8)  # (B, A, H)
    logit = head(emb)['logit']  # (B, A, N)
    assert logit.shape == (5, 2, ACTION_NUM)
    v = head.heading(head.body(emb))  # (B, A, 2)
    angle = torch.atan2(v[..., 1], v[..., 0])
    nearest = torch.round(angle / (2 * torch.pi) * MOVE_DIRECTIONS).long() % MOVE_DIRECTIONS  # (B, A)
    assert torch.equal(logit[..., :MOVE_DIRECTIONS].argmax(-1), nearest)
    k = 3
    expected = v[..., 0] * ACTION_TABLE[k][0] + v[..., 1] * ACTION_TABLE[k][1]  # |v| cos(angle - theta_k)
    assert torch.allclose(logit[..., k], expected, atol=1e-6)
    assert torch.allclose(logit[..., [EJECT, SPLIT]], head.other(head.body(emb)), atol=1e-6)

