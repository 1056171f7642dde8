#!/usr/bin/env python3
"""Files that import each other in a circle, within each crate of crates/ (run by
scripts/lint.sh; crates cannot: cargo refuses a circle of dependencies): an edge
A -> B when file A names an item of module B (`crate::b::...`, `super::...`,
`self::...`), except a parent module naming its own children (declaring and
re-exporting them is a parent's job); then every strongly connected set of two or
more files is printed. Exit status 1 when there is one. On the tree before the two
circles were broken (usi's engine and search, model's frozen net and inference) it
prints exactly those two.

    python3 scripts/module_cycles.py [CRATES_DIR]"""
import os, re, sys

def modules(src):
    """module path (tuple) -> file, for every .rs file under src."""
    out = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith('.rs'):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ('lib', 'main') and len(parts) == 1:
                parts = []
            elif parts[-1] == 'mod':
                parts = parts[:-1]
            out[tuple(parts)] = os.path.join(src, rel)
    return out

PATH = re.compile(r'\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)')
USE_GROUP = re.compile(r'\buse\s+(crate|super|self)::\{([^;]*)\};', re.S)

def targets(mods, here, text):
    text = re.sub(r'//[^\n]*', '', text)
    # Tests inside a file (`#[cfg(test)] mod tests { ... }`) are not the module's imports.
    cut = re.search(r'#\[cfg\(test\)\]\s*mod\s+\w+\s*\{', text)
    if cut:
        text = text[:cut.start()]
    found = []
    def resolve(root, names):
        if root == 'crate':
            base = ()
        elif root == 'super':
            base = here[:-1]
        else:
            base = here
        path = base + tuple(names)
        while path and path not in mods:
            path = path[:-1]
        found.append(path)
    for root, group in USE_GROUP.findall(text):
        for item in group.split(','):
            names = [n for n in item.strip().split('::') if n and n != 'self' and not n.startswith('{')]
            names = [re.split(r'[\s{}]', n)[0] for n in names]
            resolve(root, [n for n in names if n])
    for root, rest in PATH.findall(text):
        resolve(root, [n for n in rest.split('::') if n])
    return found

def cycles(src):
    mods = modules(src)
    edges = {m: set() for m in mods}
    for m, f in mods.items():
        for t in targets(mods, m, open(f).read()):
            if t == m or t not in mods:
                continue
            if t[:-1] == m:  # a parent naming its own child
                continue
            if t[:len(m)] == m and len(t) > len(m):  # an ancestor naming its descendants
                continue
            edges[m].add(t)
    # Tarjan's strongly connected components
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(mods[c] for c in comp))
    sys.setrecursionlimit(10000)
    for v in mods:
        if v not in index:
            visit(v)
    return out

root = sys.argv[1] if len(sys.argv) > 1 else 'crates'
found = []
for crate in sorted(os.listdir(root)):
    src = os.path.join(root, crate, 'src')
    if os.path.isdir(src):
        found += cycles(src)
for c in found:
    print('circle: ' + ' <-> '.join(c))
print(f'{len(found)} circles of files in {root}/*/src')
sys.exit(1 if found else 0)
