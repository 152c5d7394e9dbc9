"""The config reference of docs/configuration.md, generated: every key of default_config() with its default and the
comment written next to it where the default lives.

    python -m ppo_gobigger.config_reference                  # print the markdown table
    python -m ppo_gobigger.config_reference --write           # replace the table between the markers of DOC
    python -m ppo_gobigger.config_reference --write FILE.md   # ... of another file

A key's comment is the ``# ...`` at the end of its line, else the comment lines right above it (both styles are
in use: DI-engine's policy config puts them above, the env config and the model signature beside).
"""
import argparse
import ast
import inspect
import io
import os
import sys
import textwrap
import tokenize
from typing import Any, Callable, Dict, Iterator, List, Tuple

from .quiet import silence_third_party_noise

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'docs', 'configuration.md')
START, END = '<!-- config-reference:start -->', '<!-- config-reference:end -->'
# Keys with no comment in their owner's source. Each entry is a stopgap: add the comment there and delete it here.
UNCOMMENTED: Dict[str, str] = {}


def sources() -> List[Tuple[str, Any]]:
    """(key prefix, object whose source holds the defaults of the keys under it), outermost first."""
    from .config import default_config
    from .envs.gobigger_env import GoBiggerEnv
    from .model.gobigger_ppo_model import GoBiggerPPOModel
    from .policy.gobigger_ppo import GoBiggerPPOPolicy

    return [('', default_config), ('env.', GoBiggerEnv), ('policy.', GoBiggerPPOPolicy),
            ('policy.model.', GoBiggerPPOModel.__init__)]


def comments() -> Dict[str, str]:
    """{dotted key: its comment} from every source."""
    found: Dict[str, str] = dict(UNCOMMENTED)
    for prefix, obj in sources():
        # a class inherits its bases' config (DI-engine's Policy adds keys): bases first, the subclass overrides
        owners = [c for c in reversed(obj.__mro__) if 'config' in vars(c)] if inspect.isclass(obj) else [obj]
        for owner in owners:
            origin = '' if owner.__module__.startswith('ppo_gobigger') else f'(from {owner.__module__}) '
            for key, comment in _source_comments(owner):
                found[prefix + key] = origin + comment
    return found


def entries() -> List[Tuple[str, Any, str]]:
    """(dotted key, default, meaning) for every leaf of default_config(); a free-form section is one leaf."""
    from .config import FREE_FORM, default_config

    meaning = comments()
    out = []
    for key, default in _leaves(default_config(), '', FREE_FORM):
        if key not in meaning:
            raise ValueError(f'config key {key!r} has no comment where its default is set; write one there')
        out.append((key, default, meaning[key]))
    return out


def markdown() -> str:
    lines = ['| key | default | meaning |', '| --- | --- | --- |']
    for key, default, meaning in entries():
        lines.append(f'| `{key}` | `{default!r}` | {meaning.replace("|", "&#124;")} |')
    return '\n'.join(lines)


def replace_section(text: str, table: str) -> str:
    """``text`` with everything between the START and END markers replaced by ``table``."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f'the config reference needs one {START} line followed by one {END} line')
    head, rest = text.split(START)
    _, tail = rest.split(END)
    return f'{head}{START}\n{table}\n{END}{tail}'


def _leaves(cfg: Dict, prefix: str, free_form: Tuple[str, ...]) -> Iterator[Tuple[str, Any]]:
    for key, value in cfg.items():
        path = prefix + key
        if isinstance(value, dict) and value and path not in free_form:
            yield from _leaves(value, path + '.', free_form)
        else:
            yield path, (dict(value) if isinstance(value, dict) else value)


def _source_comments(obj: Callable) -> Iterator[Tuple[str, str]]:
    """(dotted key relative to obj, comment) for the keywords of the dict(...) calls in obj's source (for a class:
    its ``config = dict(...)``) and for a function's parameters."""
    source = textwrap.dedent(inspect.getsource(obj))
    trailing, above = _comments_by_line(source)
    tree = ast.parse(source)
    if inspect.isclass(obj):
        roots = [n.value for n in tree.body[0].body if isinstance(n, ast.Assign) and _names(n) == ['config']]
    else:
        function = tree.body[0]
        roots = [function]
        for arg in function.args.args:
            if arg.lineno in trailing:
                yield arg.arg, trailing[arg.lineno]

    def comment_of(kw: ast.keyword):  # the key is on the line where its value starts
        return trailing.get(kw.value.lineno) or trailing.get(kw.value.end_lineno) or above.get(kw.value.lineno)

    def walk(node: ast.AST, prefix: str):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == 'dict':
            for kw in node.keywords:
                comment = comment_of(kw)
                if comment:
                    yield prefix + kw.arg, comment
                yield from walk(kw.value, f'{prefix}{kw.arg}.')
            return
        for child in ast.iter_child_nodes(node):
            yield from walk(child, prefix)

    for root in roots:
        yield from walk(root, '')


def _comments_by_line(source: str) -> Tuple[Dict[int, str], Dict[int, str]]:
    """({line: comment at the end of that code line}, {line: the comment lines right above it, joined})."""
    trailing, own_line = {}, {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            text = tok.string.lstrip('#').strip()
            if tok.line.strip().startswith('#'):
                own_line[tok.start[0]] = text
            else:
                trailing[tok.start[0]] = text
    above = {}
    for line in range(1, source.count('\n') + 2):
        block, k = [], line - 1
        while k in own_line and not own_line[k].startswith('-'):  # '# ---- section ----' heads a group of keys
            block.insert(0, own_line[k])
            k -= 1
        if block:
            above[line] = ' '.join(block)
    return trailing, above


def _names(assign: ast.Assign) -> List[str]:
    return [t.id for t in assign.targets if isinstance(t, ast.Name)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description='Print the config reference, or write it into its page.')
    parser.add_argument('--write', metavar='FILE', nargs='?', const=DOC,
                        help=f'replace the table between the markers in this file (default: {DOC})')
    args = parser.parse_args(argv)
    silence_third_party_noise()
    table = markdown()
    if args.write is None:
        print(table)
        return 0
    with open(args.write) as f:
        text = f.read()
    with open(args.write, 'w') as f:
        f.write(replace_section(text, table))
    return 0


if __name__ == '__main__':
    sys.exit(main())
