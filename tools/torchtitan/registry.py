#!/usr/bin/env python3
"""Writes src/engines/torchtitan_registry.cc: torchtitan's configuration functions as the values
they set, from torchtitan's source (the configurations `--module MODEL --config FUNCTION` names).

Reads torchtitan/models/{llama3,qwen3,deepseek_v3}/config_registry.py at a commit with `git show`
and follows each function with Python's `ast` (nothing is imported): `model_spec =
model_registry(...)`, locals such as `compile_config = CompileConfig(...)`, `return
Trainer.Config(...)`, or `config = other_function()` then `config.section.field = value` /
`config.section = Section(...)` and `return config`. Each function becomes rows of

    function, key, value (JSON)

with the keys the C++ reader of recipes (src/engines/torchtitan_recipe_read.cc) keeps for a
Trainer.Config: `training.F`, `parallelism.F`, `compile.F` (the fields a section's constructor
sets; assigning a section replaces it), `activation_checkpoint` (the class, or null),
`model_spec` (model_registry's arguments, converters as objects) and the other sections by name
(`"set"`). An expression it does not follow is "?".

    tools/torchtitan/registry.py TORCHTITAN_GIT_DIR COMMIT > src/engines/torchtitan_registry.cc
"""
import ast
import json
import subprocess
import sys

MODELS = ["llama3", "qwen3", "deepseek_v3"]
SECTIONS = {"training": "TrainingConfig", "parallelism": "ParallelismConfig", "compile": "CompileConfig"}
UNKNOWN = "?"


def show(git, rev, path):
    return subprocess.run(["git", "--git-dir", git, "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return None if base is None else base + "." + node.attr
    return None


class Evaluator:
    def __init__(self, functions):
        self.functions = functions  # name -> FunctionDef
        self.done = {}

    def value(self, node, env):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.value(e, env) for e in node.elts]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.value(node.operand, env)
            return -v if isinstance(v, (int, float)) else UNKNOWN
        if isinstance(node, ast.BinOp):
            a, b = self.value(node.left, env), self.value(node.right, env)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                if isinstance(node.op, ast.Mult):
                    return a * b
                if isinstance(node.op, ast.Add):
                    return a + b
                if isinstance(node.op, ast.Sub):
                    return a - b
            return UNKNOWN
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            values = [self.value(v, env) for v in node.values]
            if UNKNOWN in values:
                return UNKNOWN
            return all(values)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In):
            a, b = self.value(node.left, env), self.value(node.comparators[0], env)
            return a in b if isinstance(b, list) and a != UNKNOWN else UNKNOWN
        if isinstance(node, ast.Name):
            return env.get(node.id, UNKNOWN)
        if isinstance(node, ast.Attribute):
            base = self.value(node.value, env)
            if isinstance(base, dict):
                return base.get(node.attr, default_of(base.get("class"), node.attr))
            return UNKNOWN
        if isinstance(node, ast.Subscript):
            name = dotted(node.value)
            key = self.value(node.slice, env)
            return f"{name}[{key}]" if name and isinstance(key, str) else UNKNOWN
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if name is None:
                return UNKNOWN
            if name in self.functions:  # another configuration function
                return {"class": "Trainer.Config", "rows": self.rows(name)}
            obj = {"class": name}
            if name == "model_registry" and node.args:
                obj["flavor"] = self.value(node.args[0], env)
            for kw in node.keywords:
                if kw.arg is not None:
                    obj[kw.arg] = self.value(kw.value, env)
            return obj
        return UNKNOWN

    def rows(self, name):
        if name in self.done:
            return self.done[name]
        self.done[name] = {}  # no recursion
        env, rows = {}, {}
        for stmt in self.functions[name].body:
            if isinstance(stmt, ast.Expr):
                if isinstance(stmt.value, ast.Call):  # a call that changes the configuration
                    rows["call " + (dotted(stmt.value.func) or "?")] = "set"
                continue  # docstrings
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                value = self.value(stmt.value, env)
                if isinstance(target, ast.Name):
                    env[target.id] = value
                    if isinstance(value, dict) and value.get("class") == "Trainer.Config":
                        rows = dict(value["rows"])
                        env[target.id] = config_view(rows)
                    continue
                path = dotted(target)
                if path and path.startswith("config."):
                    assign(rows, path[len("config."):], value)
                    env["config"] = config_view(rows)
                    continue
                rows["?"] = UNKNOWN
            elif isinstance(stmt, ast.Return):
                if isinstance(stmt.value, ast.Name) and stmt.value.id == "config":
                    continue  # the configuration as assigned
                value = self.value(stmt.value, env) if stmt.value is not None else UNKNOWN
                if isinstance(value, dict) and value.get("class") == "Trainer.Config":
                    if "rows" in value:
                        rows = dict(value["rows"])
                    else:
                        rows = {}
                        for k, v in value.items():
                            if k != "class":
                                assign(rows, k, v)
                else:
                    rows["?"] = UNKNOWN
            elif isinstance(stmt, ast.Assert):
                continue
            else:
                rows["?"] = UNKNOWN  # a statement not followed
        self.done[name] = rows
        return rows


def default_of(cls, field):
    if cls == "CompileConfig" and field == "components":
        return ["model", "loss"]
    if cls == "CompileConfig" and field == "enable":
        return False
    return UNKNOWN


def config_view(rows):
    """The configuration as objects, for expressions that read it (config.compile.enable)."""
    view = {"class": "Trainer.Config"}
    for section, cls in SECTIONS.items():
        obj = {"class": cls}
        for k, v in rows.items():
            if k.startswith(section + "."):
                obj[k[len(section) + 1:]] = v
        view[section] = obj
    return view


def assign(rows, key, value):
    section = key.split(".")[0]
    if section in SECTIONS and "." not in key:  # a whole section replaced
        for k in [k for k in rows if k.startswith(section + ".")]:
            del rows[k]
        if isinstance(value, dict) and value.get("class") == SECTIONS[section]:
            for k, v in value.items():
                if k != "class":
                    rows[f"{section}.{k}"] = v
        else:
            rows[section] = UNKNOWN
        return
    if section == "activation_checkpoint":
        rows[key] = value["class"] if isinstance(value, dict) else value
        return
    if section == "model_spec" or section in SECTIONS:
        rows[key] = value
        return
    rows[section] = "set"


def main(git, rev):
    full = subprocess.run(["git", "--git-dir", git, "rev-parse", rev], check=True,
                          capture_output=True, text=True).stdout.strip()
    out = []
    for model in MODELS:
        tree = ast.parse(show(git, rev, f"torchtitan/models/{model}/config_registry.py"))
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        ev = Evaluator(functions)
        for name, fn in functions.items():
            if not (fn.returns is not None and dotted(fn.returns) == "Trainer.Config"):
                continue
            for key, value in sorted(ev.rows(name).items()):
                out.append((model, name, key, json.dumps(value, sort_keys=True)))
    print(f"""// Generated by tools/torchtitan/registry.py from torchtitan {full[:7]}'s configuration
// functions (torchtitan/models/{{{",".join(MODELS)}}}/config_registry.py; pytorch/torchtitan,
// BSD-3-Clause, (c) Meta Platforms, Inc. and affiliates); do not edit: regenerate it. One row per
// value a function sets, as JSON ("?": an expression the generator does not follow).
#include "engines/torchtitan_registry.h"

namespace paraplan::engines {{
namespace {{

// clang-format off
constexpr TorchtitanRegistryRow kRows[] = {{""")
    for model, name, key, value in out:
        print(f"    {{{json.dumps(model)}, {json.dumps(name)}, {json.dumps(key)}, {json.dumps(value)}}},")
    print(f"""}};
// clang-format on

}}  // namespace

std::span<const TorchtitanRegistryRow> torchtitan_registry_rows() {{ return kRows; }}

}}  // namespace paraplan::engines""")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
