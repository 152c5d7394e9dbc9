"""The package's imports point down the data path and never run in a circle (ppo_gobigger/__init__.py says why).

Every ``import`` and ``from ... import`` of ppo_gobigger/ counts, those inside functions too.
``python tests/test_layout.py`` prints the graph.
"""
import ast
import os
import sys
from typing import Dict, List, Set

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'ppo_gobigger')

# Low to high: a module may import from a lower layer, and from its own group (the same subpackage, or itself),
# never from a higher one or from another group of its own layer.
LAYERS = (
    ('ppo_gobigger.quiet', 'ppo_gobigger.files', 'ppo_gobigger.errors'),
    ('ppo_gobigger.envs', ),
    ('ppo_gobigger.model', ),
    ('ppo_gobigger.policy', ),
    ('ppo_gobigger.retired_keys', ),
    ('ppo_gobigger.config', ),
    ('ppo_gobigger.pipeline.build', 'ppo_gobigger.pipeline.progress', 'ppo_gobigger.pipeline.interrupt',
     'ppo_gobigger.pipeline.threads'),
    ('ppo_gobigger.pipeline.play', ),
    ('ppo_gobigger.pipeline.learn', ),
    ('ppo_gobigger.pipeline.league', ),
    ('ppo_gobigger.pipeline.distributed', 'ppo_gobigger.pipeline.evaluate', 'ppo_gobigger.pipeline.arena',
     'ppo_gobigger.pipeline.ding_pipelines'),
    ('ppo_gobigger.pipeline.ding_baseline', ),
    ('ppo_gobigger.pipeline.monitor', ),
    ('ppo_gobigger.pipeline.serial', ),
    ('ppo_gobigger.cli', 'ppo_gobigger.config_reference'),
)
CONTAINERS = ('ppo_gobigger', 'ppo_gobigger.pipeline')  # their __init__ holds no imports of the package


def module_names() -> Dict[str, str]:
    """{dotted module name: file path} of every module of the package."""
    found = {}
    root = os.path.dirname(PACKAGE)
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, root)[:-3].replace(os.sep, '.')
                found[dotted[:-len('.__init__')] if dotted.endswith('.__init__') else dotted] = path
    return found


def imports_of(name: str, path: str, modules: Set[str]) -> Set[str]:
    """The package's modules that ``name`` imports anywhere in its file (``from x import y``: x.y if a module)."""
    is_package = path.endswith('__init__.py')
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split('.')[:len(name.split('.')) - node.level + (1 if is_package else 0)]
                module = '.'.join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            targets = [f'{module}.{alias.name}' if f'{module}.{alias.name}' in modules else module
                       for alias in node.names]
        else:
            continue
        out.update(t for t in targets if t in modules and t != name)
    return out


def graph() -> Dict[str, Set[str]]:
    modules = module_names()
    return {name: imports_of(name, path, set(modules)) for name, path in sorted(modules.items())}


def layer_of(module: str):
    """(layer index, group) of a module: the longest group name that is the module or a package above it."""
    best = None
    for index, layer in enumerate(LAYERS):
        for group in layer:
            if (module == group or module.startswith(group + '.')) and (best is None or len(group) > len(best[1])):
                best = (index, group)
    return best


def cycles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_every_module_has_a_layer():
    assert [m for m in graph() if m not in CONTAINERS and layer_of(m) is None] == []


def test_imports_point_down():
    upward = []
    for module, targets in graph().items():
        if module in CONTAINERS:
            assert not targets, f'{module} imports {targets}: a package that groups others imports none of them'
            continue
        layer, group = layer_of(module)
        for target in targets:
            target_layer, target_group = layer_of(target)
            if target_group != group and target_layer >= layer:
                upward.append(f'{module} -> {target}')
    assert upward == []


if __name__ == '__main__':
    for module, targets in graph().items():
        print(f'{module} -> {", ".join(sorted(targets)) or "-"}')
    print('cycles:', cycles(graph()) or 'none', file=sys.stderr)
