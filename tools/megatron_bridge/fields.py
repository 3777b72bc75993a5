#!/usr/bin/env python3
"""Lists the ConfigContainer fields a Megatron-Bridge launch may override, from the sources.

Reads Megatron-Bridge at a commit and the Megatron-LM commit it pins (3rdparty/Megatron-LM) with
`git show`, parses them with `ast` (nothing is imported: neither needs to run here), follows each
section's dataclass through its bases across both repositories, and prints one line per field:

    section <TAB> field <TAB> annotation <TAB> default

`section` is "" for ConfigContainer's own fields. Then the names some fields take, one per line:
`#mixed_precision <TAB> NAME` (the registered mixed-precision recipes) and `#activation_func <TAB>
NAME` (the activations Bridge maps from their names). Used to write data/megatron-bridge/fields-*.tsv,
which the tests check every `--export bridge` override against (the key exists; the value has
its annotation's type).

    tools/megatron_bridge/fields.py BRIDGE_GIT_DIR BRIDGE_COMMIT MEGATRON_GIT_DIR > fields.tsv
"""
import ast
import subprocess
import sys

# ConfigContainer's sections paraplan's export writes, and the class each is on the vanilla GPT
# recipe with --dataset mock.
SECTIONS = {
    "": ("megatron.bridge.training.config", "ConfigContainer"),
    "model": ("megatron.bridge.models.gpt_provider", "GPTModelProvider"),
    "train": ("megatron.bridge.training.config", "TrainingConfig"),
    "optimizer": ("megatron.bridge.training.config", "OptimizerConfig"),
    "ddp": ("megatron.bridge.training.config", "DistributedDataParallelConfig"),
    "dataset": ("megatron.bridge.training.config", "MockGPTDatasetConfig"),
    "tokenizer": ("megatron.bridge.training.tokenizers.config", "TokenizerConfig"),
    "comm_overlap": ("megatron.bridge.training.comm_overlap", "CommOverlapConfig"),
}


class Sources:
    def __init__(self, bridge_git, bridge_rev, megatron_git):
        self.bridge = (bridge_git, bridge_rev)
        tree = self.git(bridge_git, "ls-tree", bridge_rev, "3rdparty/Megatron-LM").split()
        self.megatron = (megatron_git, tree[2])
        self.cache = {}

    @staticmethod
    def git(git_dir, *args):
        return subprocess.run(["git", "--git-dir", git_dir, *args], check=True,
                              capture_output=True, text=True).stdout

    def module(self, name):
        """The parsed module `name` (a dotted path), or None outside the two repositories."""
        if name in self.cache:
            return self.cache[name]
        if name.startswith("megatron.bridge"):
            (git_dir, rev), root = self.bridge, "src/"
        elif name.startswith("megatron."):
            (git_dir, rev), root = self.megatron, ""
        else:
            return None
        base = root + name.replace(".", "/")
        tree = None
        for path in (base + ".py", base + "/__init__.py"):
            try:
                tree = ast.parse(self.git(git_dir, "show", f"{rev}:{path}"))
                break
            except subprocess.CalledProcessError:
                continue
        self.cache[name] = tree
        return tree

    def find_class(self, module, name, depth=0):
        """(module, ClassDef) of `name` as `module` sees it, following imports."""
        tree = self.module(module)
        if tree is None or depth > 8:
            return None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return module, node
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        source = node.module or ""
                        if node.level:
                            parts = module.split(".")
                            is_package = self.module(module) is not None and self._is_package(module)
                            keep = len(parts) - node.level + (1 if is_package else 0)
                            source = ".".join(parts[:keep] + ([node.module] if node.module else []))
                        return self.find_class(source, alias.name, depth + 1)
        return None

    def _is_package(self, module):
        git_dir, rev = self.bridge if module.startswith("megatron.bridge") else self.megatron
        root = "src/" if module.startswith("megatron.bridge") else ""
        try:
            self.git(git_dir, "cat-file", "-e", f"{rev}:{root}{module.replace('.', '/')}/__init__.py")
            return True
        except subprocess.CalledProcessError:
            return False

    def fields(self, module, name, seen=None):
        """{field: (annotation, default)} of a class and its bases, the class's own last."""
        seen = seen if seen is not None else set()
        found = self.find_class(module, name)
        if found is None or (found[0], name) in seen:
            return {}
        seen.add((found[0], name))
        where, cls = found
        out = {}
        for base in cls.bases:
            target = base.value if isinstance(base, ast.Subscript) else base
            if isinstance(target, ast.Name):
                out.update(self.fields(where, target.id, seen))
        for node in cls.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                annotation = ast.unparse(node.annotation)
                if annotation.startswith("ClassVar") or annotation.startswith("InitVar"):
                    continue
                default = ast.unparse(node.value) if node.value is not None else ""
                out[node.target.id] = (annotation, default)
        return out


def registered_names(sources):
    """The mixed-precision recipes (functions under @register, as `mixed_precision=` names them)
    and the activation names activation_func takes (ACTIVATION_FUNC_MAP's keys without a dot)."""
    out = []
    tree = sources.module("megatron.bridge.training.mixed_precision")
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Name) and d.id == "register" for d in node.decorator_list):
            out.append(("mixed_precision", node.name))
    tree = sources.module("megatron.bridge.utils.activation_map")
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "ACTIVATION_FUNC_MAP" and isinstance(
                node.value, ast.Dict):
            for key in node.value.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and "." not in key.value:
                    out.append(("activation_func", key.value))
    return sorted(set(out))


def main():
    bridge_git, bridge_rev, megatron_git = sys.argv[1:4]
    sources = Sources(bridge_git, bridge_rev, megatron_git)
    print(f"# Megatron-Bridge {bridge_rev[:9]} (Megatron-LM {sources.megatron[1][:9]}): "
          "the ConfigContainer fields of the vanilla GPT recipe with --dataset mock, by "
          "tools/megatron_bridge/fields.py")
    for section, (module, name) in SECTIONS.items():
        fields = sources.fields(module, name)
        if not fields:
            sys.exit(f"fields.py: no fields found for {section or 'ConfigContainer'} ({module}.{name})")
        for field in sorted(fields):
            annotation, default = fields[field]
            clean = lambda s: " ".join(s.split()).replace("\t", " ")
            print(f"{section}\t{field}\t{clean(annotation)}\t{clean(default)[:200]}")
    for kind, name in registered_names(sources):
        print(f"#{kind}\t{name}")


if __name__ == "__main__":
    main()
