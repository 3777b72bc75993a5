#!/usr/bin/env python3
"""Writes src/engines/megatron_bridge_recipes.cc: Megatron-Bridge's pretraining recipes as the
values they set, so that `--from bridge` reads a launch of NVIDIA's own recipes.

Reads Megatron-Bridge at a commit with `git show` and follows each recipe function with `ast`
(nothing is imported): `cfg = _pretrain_common()` (recipes/common.py: the ConfigContainer it
builds, the optimizer its helper makes), `cfg = another_recipe(...)` and `cfg = _helper("x")`
(followed, arguments bound), `cfg.model = AutoBridge.from_hf_pretrained("ID")...` (the model,
by its Hugging Face id), and `cfg.section.field = value` for a literal, a bound argument or a
dotted name (`torch.float32`). A recipe whose function does anything else to a field is left out
(its values would be a guess). Aliases (`from X import name as alias`) are kept as aliases.

    tools/megatron_bridge/recipes.py BRIDGE_GIT_DIR COMMIT > src/engines/megatron_bridge_recipes.cc
"""
import ast
import subprocess
import sys


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True,
                          text=True).stdout


class Unknown(Exception):
    pass


def literal(node, env):
    """The value of an expression as override text, or Unknown."""
    if isinstance(node, ast.Constant):
        v = node.value
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise Unknown(node.id)
    if isinstance(node, ast.Attribute):
        return ast.unparse(node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return "-" + literal(node.operand, env)
    if isinstance(node, (ast.List, ast.Tuple)):
        return "[" + ",".join(literal(e, env) for e in node.elts) + "]"
    raise Unknown(ast.unparse(node))


def call_kwargs(call, env, prefix):
    out = {}
    for kw in call.keywords:
        if kw.arg is None:
            continue
        try:
            out[prefix + kw.arg] = literal(kw.value, env)
        except Unknown:
            out[prefix + kw.arg] = "?"
    return out


class Recipes:
    def __init__(self, git_dir, rev):
        self.git_dir, self.rev = git_dir, rev
        self.files = [p for p in git(git_dir, "ls-tree", "-r", "--name-only", rev,
                                     "src/megatron/bridge/recipes").split()
                      if p.endswith(".py")]
        self.modules = {}
        for path in self.files:
            self.modules[path] = ast.parse(git(git_dir, "show", f"{rev}:{path}"))
        self.functions = {}  # name -> (path, FunctionDef)
        self.aliases = {}
        for path, tree in self.modules.items():
            for node in tree.body:
                if isinstance(node, ast.FunctionDef):
                    self.functions.setdefault(node.name, (path, node))
        for path, tree in self.modules.items():
            for node in tree.body:
                if isinstance(node, ast.ImportFrom):
                    for alias in node.names:
                        if alias.asname and alias.name in self.functions:
                            self.aliases[alias.asname] = alias.name
        # Module-level integer and string constants (DEFAULT_NULL_TOKENIZER_VOCAB_SIZE, ...).
        self.constants = {}
        for path, tree in self.modules.items():
            for node in tree.body:
                target = node.target if isinstance(node, ast.AnnAssign) else (
                    node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1
                    else None)
                if isinstance(target, ast.Name) and isinstance(node.value, ast.Constant) and \
                        isinstance(node.value.value, (int, str)) and target.id.isupper():
                    self.constants[target.id] = literal(node.value, {})
        self.common = self._common()

    def _common(self):
        """_pretrain_common's ConfigContainer(...) and its optimizer helper's values."""
        _, fn = self.functions["_pretrain_common"]
        values = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ConfigContainer":
                for kw in node.keywords:
                    if isinstance(kw.value, ast.Call):
                        values.update(call_kwargs(kw.value, {}, kw.arg + "."))
                    elif kw.arg:
                        try:
                            values[kw.arg] = literal(kw.value, {})
                        except Unknown:
                            pass
        helper = ast.parse(git(self.git_dir, "show", f"{self.rev}:src/megatron/bridge/recipes/"
                                                     "utils/optimizer_utils.py"))
        for node in helper.body:
            if isinstance(node, ast.FunctionDef) and \
                    node.name == "distributed_fused_adam_with_cosine_annealing":
                for call in ast.walk(node):
                    if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "OptimizerConfig":
                        for kw in call.keywords:
                            if kw.arg == "use_distributed_optimizer":
                                values["optimizer.use_distributed_optimizer"] = literal(kw.value, {})
        values["model"] = "?"
        return values

    def apply_layout_builder(self, call, values):
        """set_*_pipeline_model_parallel_layout(cfg.model): the layout its builder's table gives
        for the recipe's pp and vp (the builders' layout_map of lists of layer names); a pair
        the table lacks leaves the layout unset, as Bridge's setter does (it passes on the
        builder's ValueError)."""
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and
                call.func.id.startswith("set_") and
                call.func.id.endswith("_pipeline_model_parallel_layout")):
            return
        builder = values.get("model._pipeline_model_parallel_layout_builder")
        if builder not in self.functions or call.keywords:
            values["model.pipeline_model_parallel_layout"] = "?"
            return
        _, fn = self.functions[builder]
        try:
            pp = int(values.get("model.pipeline_model_parallel_size", "1"))
            vp_text = values.get("model.virtual_pipeline_model_parallel_size", "null")
            vp = 1 if vp_text == "null" else int(vp_text)
            mtp_text = values.get("model.mtp_num_layers", "null")
            mtp = 0 if mtp_text in ("null", "?") else int(mtp_text)
        except ValueError:
            values["model.pipeline_model_parallel_layout"] = "?"
            return
        env = {"mtp_layers": mtp, "pp_size": pp, "vp_size": vp}
        for stmt in fn.body:  # the builder's assignments: last_layer, layout_map, ...
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name):
                try:
                    env[stmt.targets[0].id] = eval(  # lists, + and * of the source's literals
                        compile(ast.Expression(stmt.value), "<layout>", "eval"),
                        {"__builtins__": {}}, dict(env))
                except Exception:
                    pass
        table = env.get("layout_map")
        if not isinstance(table, dict):
            values["model.pipeline_model_parallel_layout"] = "?"
            return
        layout = table.get((pp, vp))
        if layout is not None:
            values["model.pipeline_model_parallel_layout"] = layout_text(layout)

    def evaluate(self, name, args=(), kwargs=None, depth=0):
        """(values, hf_id) of a recipe function, or Unknown."""
        if depth > 6:
            raise Unknown("depth")
        path, fn = self.functions[name]
        env = dict(self.constants)
        params = [a.arg for a in fn.args.args]
        defaults = fn.args.defaults
        for p, d in zip(params[len(params) - len(defaults):], defaults):
            env[p] = literal(d, {})
        for p, v in zip(params, args):
            env[p] = v
        env.update(kwargs or {})
        values, hf = None, None
        for stmt in fn.body:
            if isinstance(stmt, ast.Return):
                break
            if isinstance(stmt, ast.Expr) and values is not None:
                self.apply_layout_builder(stmt.value, values)
                apply_flex_dispatcher(stmt.value, values, env)
                continue
            if isinstance(stmt, (ast.Expr, ast.Pass)):
                continue
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.Name) and target.id == "cfg":
                if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
                    raise Unknown("cfg")
                callee = value.func.id
                if callee == "_pretrain_common":
                    values, hf = dict(self.common), None
                elif callee in self.functions:
                    call_args = [literal(a, env) for a in value.args]
                    call_kw = {kw.arg: literal(kw.value, env) for kw in value.keywords}
                    values, hf = self.evaluate(callee, call_args, call_kw, depth + 1)
                    values = dict(values)
                else:
                    raise Unknown(callee)
                continue
            if values is None:
                continue
            chain = ast.unparse(target)
            if not chain.startswith("cfg."):
                continue
            key = chain[4:]
            if key == "model":
                found = [n for n in ast.walk(value) if isinstance(n, ast.Call)
                         and getattr(n.func, "attr", "") == "from_hf_pretrained"]
                if not found or not found[0].args:
                    raise Unknown("model")
                hf = literal(found[0].args[0], env)  # a string, or a module constant naming it
                continue
            if key.count(".") > 1:
                continue
            if key == "comm_overlap" and isinstance(value, ast.Call) and \
                    getattr(value.func, "id", "") == "CommOverlapConfig":
                values[key] = "set"
                values.update(call_kwargs(value, env, "comm_overlap."))
                continue
            if key == "mixed_precision" and isinstance(value, ast.Call) and \
                    getattr(value.func, "id", "") == "MixedPrecisionConfig" and not value.args:
                # A custom precision (DeepSeek-V3's): its keywords, the rest the dataclass's.
                values[key] = "MixedPrecisionConfig"
                values.update(call_kwargs(value, env, "mixed_precision."))
                continue
            if key == "model._pipeline_model_parallel_layout_builder" and \
                    isinstance(value, ast.Name) and value.id in self.functions:
                values[key] = value.id  # the function set_*_layout(cfg.model) calls
                continue
            cast = cast_of_field(value, values)  # float(cfg.model.x), int(cfg.model.x)
            if cast is not None:
                values[key] = cast
                continue
            try:
                values[key] = literal(value, env)
            except Unknown:
                if isinstance(value, ast.Call) and key == "mixed_precision" and \
                        isinstance(value.func, ast.Name) and not value.args:
                    values[key] = value.func.id
                else:
                    values[key] = "?"
        if values is None:
            raise Unknown("no cfg")
        return values, hf


def apply_flex_dispatcher(call, values, env):
    """apply_flex_dispatcher_backend(cfg.model, BACKEND) (training/flex_dispatcher_backend.py):
    on Hopper and Blackwell, DeepEP or HybridEP replaces the all-to-all dispatcher (token
    dispatcher "flex"), and the shared experts' overlap goes off. Another backend, or one the
    generator cannot read, leaves the dispatcher as set, or unknown."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and
            call.func.id == "apply_flex_dispatcher_backend"):
        return
    if values.get("model.num_moe_experts") in ("0", "null"):  # Bridge skips dense models
        return
    backend = None
    if len(call.args) >= 2:
        chain = ast.unparse(call.args[1])
        if chain.startswith("cfg."):
            backend = values.get(chain[4:])
        else:
            try:
                backend = literal(call.args[1], env)
            except Unknown:
                backend = "?"
    if backend in ("deepep", "hybridep"):
        values["model.moe_token_dispatcher_type"] = "flex"
        values["model.moe_flex_dispatcher_backend"] = backend
        values["model.moe_shared_expert_overlap"] = "false"
    elif backend not in (None, "null"):
        values["model.moe_token_dispatcher_type"] = "?"


def cast_of_field(value, values):
    """float(cfg.S.F) / int(cfg.S.F) of a field already set: its value cast, else None."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and
            value.func.id in ("float", "int") and len(value.args) == 1):
        return None
    chain = ast.unparse(value.args[0])
    if not chain.startswith("cfg.") or values.get(chain[4:]) in (None, "?"):
        return None
    v = float(values[chain[4:]])
    return str(float(v)) if value.func.id == "float" else str(int(v))


LAYER_LETTERS = {"embedding": "E", "decoder": "t", "mtp": "m", "loss": "L"}


def layout_text(layout):
    """A layout as lists of layer names, in Megatron-Core's notation (E, t, m, L; | between)."""
    stages = []
    for stage in layout:
        letters = "".join(LAYER_LETTERS[name] for name in stage)
        stages.append(letters)
    return "|".join(stages)


def cxx(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    git_dir, rev = sys.argv[1:3]
    recipes = Recipes(git_dir, rev)
    rows = []
    for name in sorted(recipes.functions):
        path, _ = recipes.functions[name]
        if "_pretrain_" not in name or not name.endswith("_config") or name.startswith("_"):
            continue
        if "/vl" in path or "_vl" in path or "omni" in path or "flux" in path:
            continue
        try:
            values, hf = recipes.evaluate(name)
        except (Unknown, KeyError, IndexError):
            continue
        if not hf:
            continue
        rows.append((name, hf, values))
    aliases = sorted((a, n) for a, n in recipes.aliases.items() if any(r[0] == n for r in rows))
    print(f"// Generated by tools/megatron_bridge/recipes.py from Megatron-Bridge {rev[:7]}'s "
          "pretraining recipes;")
    print("// do not edit: regenerate it. One row per value a recipe sets (\"?\": an expression "
          "the generator")
    print("// does not follow), with the model it builds by its Hugging Face id.")
    print('#include "engines/megatron_bridge_recipes.h"\n')
    print("#include <iterator>\n")
    print("namespace paraplan::engines {")
    print("namespace {\n")
    print("struct Row {")
    print("  const char* recipe;")
    print("  const char* hf_id;")
    print("  const char* key;")
    print("  const char* value;")
    print("};\n")
    print("// clang-format off")
    print("constexpr Row kRows[] = {")
    for name, hf, values in rows:
        for key in sorted(values):
            if key == "model" or values[key] is None:
                continue
            print(f"    {{{cxx(name)}, {cxx(hf)}, {cxx(key)}, {cxx(values[key])}}},")
    print("};\n")
    print("constexpr std::pair<const char*, const char*> kAliases[] = {")
    for alias, name in aliases:
        print(f"    {{{cxx(alias)}, {cxx(name)}}},")
    print("};")
    print("// clang-format on\n")
    print("}  // namespace\n")
    print("""const std::vector<BridgeRecipe>& megatron_bridge_recipes() {
  static const std::vector<BridgeRecipe> recipes = [] {
    std::vector<BridgeRecipe> out;
    for (const Row& row : kRows) {
      if (out.empty() || out.back().name != row.recipe) out.push_back({row.recipe, row.hf_id, {}});
      out.back().values.emplace_back(row.key, row.value);
    }
    return out;
  }();
  return recipes;
}

const std::vector<std::pair<std::string, std::string>>& megatron_bridge_recipe_aliases() {
  using Aliases = std::vector<std::pair<std::string, std::string>>;
  static const Aliases aliases(std::begin(kAliases), std::end(kAliases));
  return aliases;
}

const BridgeRecipe* find_megatron_bridge_recipe(const std::string& name) {
  std::string wanted = name;
  for (const auto& [alias, recipe] : megatron_bridge_recipe_aliases())
    if (alias == name) wanted = recipe;
  for (const BridgeRecipe& r : megatron_bridge_recipes())
    if (r.name == wanted) return &r;
  return nullptr;
}

}  // namespace paraplan::engines""")


if __name__ == "__main__":
    main()
