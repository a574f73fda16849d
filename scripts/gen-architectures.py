#!/usr/bin/env python3
"""Build data/architectures.json: per model architecture name, the releases whose model registry
resolves it, and the releases whose start-up code rewrites it before the registry looks it up.

    scripts/gen-architectures.py        # every release in sglang_releases.RELEASES (unpacked wheels)

Read statically from each unpacked release (nothing imported):

  * "c" (class): the registry. SGLang imports every module directly under sglang/srt/models/
    (not its sub-packages) and registers the class names its `EntryClass` binds (a class or a
    list of classes; the architecture name is the class's own name, also when imported).
  * "r" (rewritten): a name SGLang's own configuration code may replace in `architectures`
    before the lookup: a string compared in the test of an `if` whose body assigns, appends to
    or removes from an `architectures` value (directly, or through a helper such as
    `_set_architectures`), or sets the model type (which picks the configuration class and the
    rewrites that follow), in sglang/srt/configs/, hf_transformers_utils, sglang/srt/model_loader/
    and the registry (e.g. Olmo3ForCausalLM → Olmo2ForCausalLM, LongcatCausalLM through its model
    type). A predicate the test calls or names (`is_embedding_gemma`) is read too. Where such a
    rewrite applies is not modelled: a name the release may rewrite is taken as one it loads
    (the launcher then says nothing).
  * "d" (draft): the same, for rewrites made only for a speculative draft model (tests naming
    `is_draft_model`, or inside a function about the draft): a NextN / MTP checkpoint's target
    architecture becomes its draft class.

and per release ("config_types"), the `model_type`s whose checkpoints SGLang's configuration code
gives architectures of its own: the model types those tests compare, and those of SGLang's own
configuration classes that set `architectures` themselves. A checkpoint of such a type is looked
up under whatever that code writes, so its config.json's names are not judged.

  * "n" (no pipeline parallelism): releases whose model runner asserts, with --pp-size > 1, that
    the loaded model's `forward` takes `pp_proxy_tensors`, and whose registered class of this
    name has a `forward` without it. The class's `forward` is found as Python would: in the class,
    else in its bases in order, following imports between SGLang's model modules; a base from
    elsewhere (torch's `nn.Module`) has none, and a class whose `forward` cannot be found that way
    (a base from outside the model modules, an assigned `forward`, a decorator other than torch's
    no-grad ones) is left out: only a known miss is recorded. A `forward(..., **kwargs)` has no
    parameter of that name, and the gate refuses it.

  * "e" (no embedding hand-over): releases whose EAGLE-family draft worker takes the target's
    embedding and LM head with `get_embed_and_head()` (a call on the target in
    sglang/srt/speculative/), and whose registered class of this name is known to have neither
    that method nor `get_embed_and_head_for_draft` (the later releases' alternative): defined in
    the class or its bases, found as for "n"; a class defining `__getattr__` or decorated, or a
    base that cannot be read, is left out.
  * "3" (no EAGLE3 capture hook): likewise, for `set_eagle3_layers_to_capture`, in releases
    whose model runner calls it on the target for EAGLE3.

"pp_gate_from": the first release from which every release's model runner has that assert.
"transformers_fallback_from": the first release from which every release's loader, for a name
its registry lacks, tries the generic Transformers backend (`resolve_transformers_arch` in
model_loader/utils.py, and `TransformersForCausalLM` registered) instead of raising at once.
"mistral_by_name_from": the first release from which every release reads a checkpoint whose
path names a Mistral model ("mistral-large-3", …) from Mistral's own params.json, not config.json.

Facts only: names and release ranges. Output, one entry per line and the brackets that close
each section on lines of their own (the launcher decodes only the line it looks up):
{"format", "releases": [first, last], "transformers_fallback_from", "mistral_by_name_from",
"architectures": {NAME: {"c"|"r"|"d": [[first, last], ...]}}, "config_types": {TYPE: [[first,
last], ...]}}, each range inclusive, in release order.
"""
import ast
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sglang_releases as rel  # noqa: E402

OUT = rel.ROOT / "data" / "architectures.json"
# What an architecture name looks like: a CamelCase identifier with a lower-case letter, not one
# of transformers' auto classes (`auto_map` keys such as AutoModel, which tests compare too).
ARCH = re.compile(r"^(?!Auto[A-Z])[A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*$")
# The configuration code that runs before the registry lookup, relative to sglang/srt/.
CONFIG_CODE = ["configs", "hf_transformers_utils.py", "utils/hf_transformers_utils.py",
               "utils/hf_transformers", "model_loader", "models/registry.py"]


def parse(path):
    try:
        return ast.parse(path.read_text(encoding="utf-8-sig", errors="replace"))
    except SyntaxError:
        return None


def entry_classes(tree, keep_local=False):
    """The class names `EntryClass = X` or `EntryClass = [X, Y]` binds (an imported class keeps
    its own name: `from m import A as B` registers A; `keep_local` gives B)."""
    renamed = {} if keep_local else {
        a.asname: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
        for a in n.names if a.asname}
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets):
            values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            out += [renamed.get(v.id, v.id) for v in values if isinstance(v, ast.Name)]
    return out


def registry(src):
    names = set()
    for f in sorted((src / "models").glob("*.py")):
        tree = parse(f)
        if tree is not None:
            names.update(entry_classes(tree))
    return names


def mentions(node, word):
    return any((isinstance(n, ast.Attribute) and n.attr == word)
               or (isinstance(n, ast.Name) and n.id == word)
               or (isinstance(n, ast.Constant) and n.value == word)
               for n in ast.walk(node))


class Code:
    """One release's configuration code: its modules, their string constants, and the helper
    functions that change `architectures` (`_set_architectures(config, "X")`)."""

    def __init__(self, trees):
        self.trees = trees
        self.consts = constants(trees)
        self.functions = {}
        for tree in trees:
            for n in ast.walk(tree):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.functions.setdefault(n.name, []).append(n)
        self.helpers = set()
        while True:
            more = {name for name, defs in self.functions.items() if name not in self.helpers
                    and any(self.changes(d.body, model_type=False) for d in defs)}
            if not more:
                break
            self.helpers |= more

    def changes(self, body, model_type=True):
        """The statements assign, append to, remove from or update an `architectures` value
        (or, with `model_type`, the model type, which picks the configuration class and later
        rewrites), directly or through a helper."""
        def hit(n):
            # A local `model_type` variable (the GGUF loader's) is not the config's.
            return mentions(n, "architectures") or (model_type and any(
                (isinstance(m, ast.Attribute) and m.attr == "model_type")
                or (isinstance(m, ast.Constant) and m.value == "model_type") for m in ast.walk(n)))

        for stmt in body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Assign) and any(hit(t) for t in n.targets):
                    return True
                if isinstance(n, (ast.AugAssign, ast.AnnAssign)) and hit(n.target):
                    return True
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in (
                        "append", "remove", "insert", "extend", "update", "setdefault", "pop",
                        "clear") and hit(n):
                    return True
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and (
                        (n.func.id == "setattr" and hit(n)) or n.func.id in self.helpers):
                    return True
        return False

    def names_in(self, test, seen=None):
        """(architecture names, model types) a test compares, following the predicates it calls
        or names (`is_embedding_gemma(config)`, `getattr(cfg, "is_embedding_gemma", False)`)."""
        seen = set() if seen is None else seen
        strings, types = set(), set()
        for n in ast.walk(test):
            if isinstance(n, ast.Constant) and isinstance(n.value, str):
                strings.add(n.value)
            elif isinstance(n, ast.Name) and n.id in self.consts:
                strings |= self.consts[n.id]
            if isinstance(n, ast.Compare) and mentions(n, "model_type"):
                for side in [n.left] + n.comparators:
                    types |= {c.value for c in ast.walk(side)
                              if isinstance(c, ast.Constant) and isinstance(c.value, str)}
                    types |= {v for c in ast.walk(side) if isinstance(c, ast.Name)
                              for v in self.consts.get(c.id, ())}
        called = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)} | {
            n.attr for n in ast.walk(test) if isinstance(n, ast.Attribute)} | strings
        for name in sorted(called & set(self.functions) - seen):
            seen.add(name)
            for d in self.functions[name]:
                a, t = self.names_in(d, seen)
                strings |= a
                types |= t
        types.discard("model_type")
        return {s for s in strings if ARCH.match(s)}, {t for t in types if not ARCH.match(t)}

    def rewrites(self, tree):
        """(target names, draft-only names, model types): what the tests of `if`s that change
        `architectures` compare. Draft-only: an enclosing test or function is about the draft."""
        target, draft, types = set(), set(), set()

        def visit(node, drafty):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                drafty = drafty or "draft" in node.name
            if isinstance(node, ast.If):
                d = drafty or about_draft(node.test)
                if self.changes(node.body) or self.changes(node.orelse):
                    names, mts = self.names_in(node.test)
                    (draft if d else target).update(names)
                    if not d:
                        types.update(mts)
                for child in node.body + node.orelse:
                    visit(child, d)
                return
            for child in ast.iter_child_nodes(node):
                visit(child, drafty)

        visit(tree, False)
        return target, draft, types

    def setting_config_types(self, tree):
        """`model_type`s of configuration classes whose own code sets `architectures`."""
        out = set()
        for cls in ast.walk(tree):
            if not isinstance(cls, ast.ClassDef):
                continue
            mt = [n.value.value for n in cls.body if isinstance(n, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "model_type" for t in n.targets)
                  and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)]
            if mt and self.changes(cls.body, model_type=False):
                out.update(mt)
        return out


def constants(trees):
    """Module-level names bound to collections of strings (`MIMO_ARCHS = ["A", "B"]`), across
    the configuration modules, so a test `arch in MIMO_ARCHS` names them."""
    out = {}
    for tree in trees:
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, ast.AnnAssign) and node.value else [])
            for t in targets:
                if isinstance(t, ast.Name):
                    strings = [n.value for n in ast.walk(node.value)
                               if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                    if strings:
                        out.setdefault(t.id, set()).update(strings)
    return out


def about_draft(node):
    return any((isinstance(n, ast.Name) and "draft" in n.id)
               or (isinstance(n, ast.Attribute) and "draft" in n.attr) for n in ast.walk(node))


def config_trees(src):
    trees = []
    for part in CONFIG_CODE:
        p = src / part
        files = sorted(p.rglob("*.py")) if p.is_dir() else ([p] if p.exists() else [])
        trees += [t for t in map(parse, files) if t is not None]
    return trees


def has_fallback(src):
    utils = parse(src / "model_loader" / "utils.py")
    return utils is not None and any(
        isinstance(n, ast.FunctionDef) and n.name == "resolve_transformers_arch" for n in utils.body)


PP_ASSERT = "Pipeline Parallel is not compatible with this model."


def has_pp_gate(src):
    runner = src / "model_executor" / "model_runner.py"
    return runner.exists() and PP_ASSERT in runner.read_text(encoding="utf-8", errors="replace")


class Models:
    """SGLang's model modules (sglang/srt/models/**), to find a registered class's `forward`."""

    def __init__(self, root):
        self.trees = {}
        for f in sorted(root.rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            package = parts[-1] == "__init__"
            if package:
                parts = parts[:-1]
            tree = parse(f)
            if tree is not None:
                self.trees[".".join(["sglang.srt.models"] + parts)] = (tree, package)

    def imports(self, module):
        """Local name -> (module, class name) for `from ... import` inside the model modules, and
        local name -> (module, None) for a model module imported whole."""
        tree, package = self.trees[module]
        out = {}
        for n in tree.body:
            if isinstance(n, ast.ImportFrom):
                base = module if package else module.rsplit(".", 1)[0]
                for _ in range(max(n.level - 1, 0)):
                    base = base.rsplit(".", 1)[0]
                source = n.module if n.level == 0 else ".".join(p for p in [base, n.module] if p)
                for a in n.names:
                    whole = f"{source}.{a.name}"
                    out[a.asname or a.name] = (whole, None) if whole in self.trees else (source, a.name)
            elif isinstance(n, ast.Import):
                for a in n.names:
                    if a.name in self.trees:
                        out[a.asname or a.name] = (a.name, None)
        return out

    def find(self, module, name, seen=()):
        """The ClassDef `name` as seen from `module`, and the module it lives in."""
        if module not in self.trees or (module, name) in seen:
            return None
        tree, _ = self.trees[module]
        for n in tree.body:
            if isinstance(n, ast.ClassDef) and n.name == name:
                return module, n
        target = self.imports(module).get(name)
        if target and target[1] is not None:
            return self.find(target[0], target[1], seen + ((module, name),))
        return None

    def base(self, module, node):
        """A base expression: (module, class) inside the model modules, "external" for one from
        elsewhere, None for one that cannot be read."""
        imports = self.imports(module)
        if isinstance(node, ast.Name):
            if any(isinstance(n, ast.ClassDef) and n.name == node.id for n in self.trees[module][0].body):
                return module, node.id
            target = imports.get(node.id)
            if target is None:
                return "external"
            if target[1] is None:
                return None
            return target if target[0] in self.trees else "external"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            target = imports.get(node.value.id)
            if target and target[1] is None:
                return target[0], node.attr
            return "external"
        return None

    def forward_takes_pp(self, module, name):
        """True or False when the class's `forward` is found and does or does not take
        `pp_proxy_tensors`; None when it cannot be told."""
        found = self.along_bases(module, name, forward_here)
        return {"pp": True, "no": False, "absent": False}.get(found)

    def defines(self, module, name, method):
        """"has" when the class or a base defines `method` (a def or an assignment), "absent"
        when none does, None when it cannot be told."""
        return self.along_bases(module, name, lambda cls: defines_here(cls, method))

    def along_bases(self, module, name, own, seen=()):
        """`own(class)`'s first answer other than "absent" for the class, then its bases depth
        first in order; "absent" when every one says so (torch's `nn.Module` is the only base
        from outside the model modules taken to answer "absent"), None when a class or base
        cannot be read."""
        found = self.find(module, name)
        if found is None or found in seen:
            return None
        module, cls = found
        r = own(cls)
        if r != "absent":
            return r
        for b in cls.bases:
            where = self.base(module, b)
            if where == "external" and isinstance(b, ast.Attribute) and b.attr == "Module":
                continue
            if where is None or where == "external":
                return None
            r = self.along_bases(where[0], where[1], own, seen + (found,))
            if r != "absent":
                return r
        return "absent"


def forward_here(cls):
    """"pp" / "no" for the class's own `forward` (taking `pp_proxy_tensors` or not), "absent"
    without one, None when its signature cannot be read."""
    for n in cls.body:
        targets = n.targets if isinstance(n, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "forward" for t in targets):
            return None
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "forward":
            # A decorator may change the signature the gate reads (torch's no-grad ones keep it).
            if any(not keeps_signature(d) for d in n.decorator_list):
                return None
            a = n.args
            names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
            # A `**kwargs` catch-all is no parameter of that name: the gate refuses it too.
            return "pp" if "pp_proxy_tensors" in names else "no"
    return "absent"


def defines_here(cls, method):
    """"has" when the class's own body defines `method`, "absent" when not, None when a
    decorator or a `__getattr__` may supply it."""
    if cls.decorator_list:
        return None
    for n in cls.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if n.name == method:
                return "has"
            if n.name == "__getattr__":
                return None
        targets = n.targets if isinstance(n, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == method for t in targets):
            return "has"
    return "absent"

def keeps_signature(decorator):
    """`@torch.no_grad()` / `@torch.inference_mode()`: wrappers that keep the signature."""
    call = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(call, ast.Attribute) and call.attr in ("no_grad", "inference_mode")


def registered_where(models, src, holds):
    """Registered class names whose class (module, local name) satisfies `holds`."""
    out = set()
    for f in sorted((src / "models").glob("*.py")):
        module = "sglang.srt.models." + f.stem
        if module not in models.trees:
            continue
        tree = models.trees[module][0]
        local = entry_classes(tree, keep_local=True)
        for name, registered in zip(local, entry_classes(tree)):
            if holds(module, name):
                out.add(registered)
    return out


def without_pp(models, src):
    """Registered class names whose `forward` is known not to take `pp_proxy_tensors`."""
    return registered_where(models, src, lambda m, n: models.forward_takes_pp(m, n) is False)


def lacking(models, src, methods):
    """Registered class names known to define none of `methods`."""
    return registered_where(
        models, src, lambda m, n: all(models.defines(m, n, x) == "absent" for x in methods))


EMBED_CALL = re.compile(r"target\w*(\.model_runner\.model)?\.get_embed_and_head\(\)")


def calls_embed_hand_over(src):
    """The EAGLE-family draft worker asks the target for its embedding and LM head."""
    return any(EMBED_CALL.search(f.read_text(encoding="utf-8", errors="replace"))
               for f in (src / "speculative").glob("*.py")) if (src / "speculative").is_dir() else False


def calls_eagle3_hook(src):
    """The model runner sets the target's EAGLE3 capture layers."""
    return any("set_eagle3_layers_to_capture(" in f.read_text(encoding="utf-8", errors="replace")
               for f in (src / "model_executor").rglob("*.py"))


def read_release(version):
    src = rel.source(version) / "sglang" / "srt"
    code = Code(config_trees(src))
    target, draft, types = set(), set(), set()
    for tree in code.trees:
        t, d, mt = code.rewrites(tree)
        target |= t
        draft |= d
        types |= mt | code.setting_config_types(tree)
    classes = registry(src)
    fallback = has_fallback(src) and "TransformersForCausalLM" in classes
    mistral = any(isinstance(n, ast.Constant) and n.value == "mistral-large-3"
                  for tree in code.trees for n in ast.walk(tree))
    gate = has_pp_gate(src)
    models = Models(src / "models")
    kinds = {"c": classes, "r": target - classes, "d": draft - classes - target,
             "n": (without_pp(models, src) & classes) if gate else set(),
             "e": (lacking(models, src, ["get_embed_and_head", "get_embed_and_head_for_draft"])
                   & classes) if calls_embed_hand_over(src) else set(),
             "3": (lacking(models, src, ["set_eagle3_layers_to_capture"]) & classes)
             if calls_eagle3_hook(src) else set()}
    return kinds, types, fallback, mistral, gate


def ranges(indices):
    runs = rel.runs(indices)  # [start, count, start, count, ...]
    return [[rel.RELEASES[a], rel.RELEASES[a + n - 1]] for a, n in zip(runs[::2], runs[1::2])]


def first_of_every_later(flags):
    """The first release from which every release has the feature (a boundary that holds)."""
    return rel.RELEASES[next(i for i in range(len(flags)) if all(flags[i:]))]


def main():
    per_arch, per_type, fallback, mistral, gates = {}, {}, [], [], []
    for i, v in enumerate(rel.RELEASES):
        kinds, types, fb, mi, gate = read_release(v)
        gates.append(gate)
        for kind, names in kinds.items():
            for name in names:
                per_arch.setdefault(name, {}).setdefault(kind, []).append(i)
        for t in types:
            per_type.setdefault(t, []).append(i)
        fallback.append(fb)
        mistral.append(mi)
    head = {"format": "sglang-launch model architectures 1",
            "releases": [rel.RELEASES[0], rel.RELEASES[-1]],
            "transformers_fallback_from": first_of_every_later(fallback),
            "mistral_by_name_from": first_of_every_later(mistral),
            "pp_gate_from": first_of_every_later(gates)}
    lines = [json.dumps(head)[:-1] + ",", '"architectures":{']
    arch_lines = [json.dumps(name) + ":" + json.dumps({k: ranges(ix) for k, ix in sorted(kinds.items())},
                                                      separators=(",", ":"))
                  for name, kinds in sorted(per_arch.items())]
    lines += [",\n".join(arch_lines), '},', '"config_types":{']
    type_lines = [json.dumps(t) + ":" + json.dumps(ranges(ix), separators=(",", ":"))
                  for t, ix in sorted(per_type.items())]
    lines += [",\n".join(type_lines), "}}"]
    OUT.write_text("\n".join(lines) + "\n")
    json.loads(OUT.read_text())
    print(f"{OUT.relative_to(rel.ROOT)}: {len(per_arch)} architectures, {len(per_type)} config types, "
          f"Transformers fallback from {head['transformers_fallback_from']}, Mistral configs by "
          f"name from {head['mistral_by_name_from']}", file=sys.stderr)


if __name__ == "__main__":
    main()
