"""The user's module by name: ``package.module:factory`` or ``path/to/file.py:factory``, built by
its factory with ``key=value`` arguments (integers, floats or strings). Shared by the command line
and the ranks the launcher starts."""

import importlib
import importlib.util
import os


def _value(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def load_module(spec, args=()):
    """The torch.nn.Module `spec` names, built by its factory with `args` ("key=value")."""
    if ":" not in spec:
        raise ValueError(f"{spec}: expected package.module:factory or file.py:factory "
                         f"(e.g. torchvision.models:resnet50)")
    where, factory = spec.rsplit(":", 1)
    if where.endswith(".py"):
        if not os.path.isfile(where):
            raise ValueError(f"{where}: no such file")
        loader = importlib.util.spec_from_file_location("paraplan_user_model", where)
        source = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(source)
    else:
        try:
            source = importlib.import_module(where)
        except ImportError as error:
            raise ValueError(f"{where}: cannot import ({error})") from None
    if not hasattr(source, factory):
        raise ValueError(f"{spec}: {where} has no {factory}")
    keywords = {}
    for pair in args:
        if "=" not in pair:
            raise ValueError(f"--arg {pair}: expected key=value")
        key, text = pair.split("=", 1)
        keywords[key] = _value(text)
    return getattr(source, factory)(**keywords)
