#!/usr/bin/env python3
"""Lists what a torchtitan recipe (`--export torchtitan-recipe`) may name, from torchtitan's source.

Reads torchtitan at a commit with `git show` and parses it with `ast` (nothing is imported: it
needs PyTorch 2), then prints one line per name:

    kind <TAB> owner <TAB> name <TAB> annotation-or-value

- `field`: a dataclass field of the configuration classes the recipe sets (`TrainingConfig`,
  `ParallelismConfig`, `CompileConfig` of torchtitan/config/configs.py; `Trainer.Config` of
  torchtitan/trainer.py; `Float8LinearConverter.Config` with its base's fields), with its
  annotation as the source writes it;
- `flavor`: a key of each model's `<model>_configs` table (torchtitan/models/<model>/__init__.py),
  the flavors its `model_registry` builds;
- `registry`: a function of each model's config_registry.py (the configurations `--config` names);
- `registry_args`: the parameters of each model's `model_registry`;
- `dataset`: a key of DATASETS (torchtitan/hf_datasets/text_datasets.py);
- `class`: the activation-checkpointing classes (torchtitan/distributed/activation_checkpoint.py);
- `attn_backend`: the attention backends a language model builds (the `backend == "..."` branches
  of get_attention_config in torchtitan/models/common/config_utils.py that do not raise).

    tools/torchtitan/fields.py TORCHTITAN_GIT_DIR COMMIT > data/torchtitan/fields-COMMIT.tsv
"""
import ast
import subprocess
import sys

MODELS = ["llama3", "qwen3", "deepseek_v3"]


def show(git, rev, path):
    return subprocess.run(["git", "--git-dir", git, "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def fields_of(cls):
    out = []
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.append((node.target.id, ast.unparse(node.annotation)))
    return out


def find_class(tree, dotted):
    body = tree.body
    cls = None
    for part in dotted.split("."):
        cls = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == part)
        body = cls.body
    return cls


def main(git, rev):
    rows = []
    configs = ast.parse(show(git, rev, "torchtitan/config/configs.py"))
    for name in ("TrainingConfig", "ParallelismConfig", "CompileConfig"):
        rows += [("field", name, f, a) for f, a in fields_of(find_class(configs, name))]
    trainer = ast.parse(show(git, rev, "torchtitan/trainer.py"))
    rows += [("field", "Trainer.Config", f, a) for f, a in fields_of(find_class(trainer, "Trainer.Config"))]
    quant = ast.parse(show(git, rev, "torchtitan/components/quantization/__init__.py"))
    float8 = ast.parse(show(git, rev, "torchtitan/components/quantization/float8.py"))
    base = fields_of(find_class(quant, "QuantizationConverter.Config"))
    own = fields_of(find_class(float8, "Float8LinearConverter.Config"))
    rows += [("field", "Float8LinearConverter.Config", f, a) for f, a in base + own]
    for model in MODELS:
        init = ast.parse(show(git, rev, f"torchtitan/models/{model}/__init__.py"))
        for node in init.body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                    and node.targets[0].id.endswith("_configs")):
                rows += [("flavor", model, k.value, "") for k in node.value.keys]
            if isinstance(node, ast.FunctionDef) and node.name == "model_registry":
                rows += [("registry_args", model, a.arg, "") for a in node.args.args]
        reg = ast.parse(show(git, rev, f"torchtitan/models/{model}/config_registry.py"))
        rows += [("registry", model, n.name, "") for n in reg.body if isinstance(n, ast.FunctionDef)]
    text = ast.parse(show(git, rev, "torchtitan/hf_datasets/text_datasets.py"))
    for node in text.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "DATASETS":
            rows += [("dataset", "DATASETS", k.value, "") for k in node.value.keys]
    ac = ast.parse(show(git, rev, "torchtitan/distributed/activation_checkpoint.py"))
    rows += [("class", "activation_checkpoint", n.name, "") for n in ac.body if isinstance(n, ast.ClassDef)]
    utils = ast.parse(show(git, rev, "torchtitan/models/common/config_utils.py"))
    get = next(n for n in utils.body if isinstance(n, ast.FunctionDef) and n.name == "get_attention_config")
    branch = get.body[-1] if isinstance(get.body[-1], ast.If) else next(n for n in get.body if isinstance(n, ast.If))
    while isinstance(branch, ast.If):
        test = branch.test
        if (isinstance(test, ast.Compare) and isinstance(test.comparators[0], ast.Constant)
                and not isinstance(branch.body[-1], ast.Raise)):
            rows.append(("attn_backend", "get_attention_config", test.comparators[0].value, ""))
        branch = branch.orelse[0] if branch.orelse else None
    full = subprocess.run(["git", "--git-dir", git, "rev-parse", rev], check=True,
                          capture_output=True, text=True).stdout.strip()
    print(f"# torchtitan {full}: what a recipe may name, by tools/torchtitan/fields.py")
    for row in rows:
        print("\t".join(" ".join(str(c).split()) for c in row))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
