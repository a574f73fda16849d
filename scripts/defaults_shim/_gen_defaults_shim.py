"""Loaded at start-up (a .pth file) in the defaults-oracle venvs that scripts/gen-defaults.py
builds. Without torch, transformers 5.x turns its top-level `AutoImageProcessor` into a
placeholder that raises on any use; SGLang 0.5.14 – 0.5.19 register their image processors on it
at import, so the oracle could not import them. The real class (which needs only PIL) is handed
out instead. Nothing the memory defaults read comes from it."""
import importlib.abc
import importlib.machinery
import sys


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "transformers":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            # transformers puts a lazy module in its own place in sys.modules.
            lazy = type(sys.modules["transformers"])
            if not hasattr(lazy, "__getattr__"):
                return
            fallback = lazy.__getattr__

            def __getattr__(self, attr):
                if attr == "AutoImageProcessor" and self.__name__ == "transformers":
                    from transformers.models.auto.image_processing_auto import AutoImageProcessor
                    return AutoImageProcessor
                return fallback(self, attr)

            lazy.__getattr__ = __getattr__

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Finder())
