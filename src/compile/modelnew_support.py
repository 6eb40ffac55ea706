"""kbench's Python side of KernelBench's ModelNew format (see modelnew.h). Compiled into kbench and
run by its embedded interpreter (python_runtime.h); the C++ side calls these functions, and the
submission calls kbench's load_inline in place of torch.utils.cpp_extension's.

Everything a submission could rebind (module attributes of importlib, torch, inspect) is looked up
here once, when kbench sets up, before any submission code runs."""
import gc
import importlib.util
import inspect
import json
import os
import sys

import torch
import torch.utils.cpp_extension as _cpp_extension

_spec_from_file_location = importlib.util.spec_from_file_location
_module_from_spec = importlib.util.module_from_spec
_signature = inspect.signature
_json_dumps, _json_loads = json.dumps, json.loads
_no_grad = torch.no_grad
_Module = torch.nn.Module
_float32 = torch.float32
_real_load_inline = _cpp_extension.load_inline

UNSUPPORTED = "[kbench:unsupported_backend] "


def initialise_cuda():
    """torch.cuda's lazy set-up, and the device count it caches, done by kbench itself."""
    torch.cuda.init()
    torch.cuda.device_count()


def _execute(path, name):
    spec = _spec_from_file_location(name, path)
    module = _module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _names_for_submission(problem):
    """The problem file's names that a submission sees. KernelBench's eval runs the reference's code
    and then the submission's in one namespace, so a ModelNew that uses `math` or `F` without
    importing them works where the reference imports them; so does one that uses its constants
    (batch_size). The problem's own classes and functions (Model, get_inputs, helper modules) are
    left out: a ModelNew that reuses them lets the reference compute the answer."""
    return {name: value for name, value in vars(problem).items()
            if not name.startswith("__") and getattr(value, "__module__", None) != problem.__name__}


def load_problem(problem_path):
    """The problem's get_init_inputs() and the names a submission sees. Its module is dropped and
    collected afterwards: no reference to the problem's Model is left for a submission to find."""
    problem = _execute(problem_path, "kbench_problem")
    values, names = list(problem.get_init_inputs()), _names_for_submission(problem)
    del problem
    gc.collect()
    return values, names


def import_submission(path, names):
    """Runs the submission file as module `kbench_submission` (registered, as an import would, so
    that dataclasses and the like work) over `names` (load_problem's), with kbench's load_inline in
    torch's place."""
    _cpp_extension.load_inline = load_inline
    _cpp_extension.load = load
    spec = _spec_from_file_location("kbench_submission", path)
    module = _module_from_spec(spec)
    module.__dict__.update(names)
    sys.modules["kbench_submission"] = module
    spec.loader.exec_module(module)
    return module


def model_class(module):
    cls = getattr(module, "ModelNew", None)
    if cls is None:
        raise LookupError("the file defines no class ModelNew (KernelBench's format: class ModelNew(nn.Module))")
    if not (isinstance(cls, type) and issubclass(cls, _Module)):
        raise TypeError("ModelNew is not a subclass of torch.nn.Module")
    return cls


def forward_signature(cls):
    try:
        return "ModelNew.forward" + str(_signature(cls.forward))
    except (TypeError, ValueError):
        return "ModelNew.forward(...)"


def construct(cls, arguments):
    """As KernelBench builds it: on the CPU, under no_grad, from get_init_inputs() (the caller has
    seeded torch as the reference was seeded)."""
    with _no_grad():
        return cls(*arguments)


def to_device(model, device):
    """KernelBench's move to the GPU, in float32."""
    with _no_grad():
        return model.to(device=device, dtype=_float32)


def state_tensors(model):
    """ModelNew's parameters and buffers by name, sharing memory with the module: kbench
    fingerprints them around every call, so a forward that writes into them is caught."""
    tensors = {name: p.detach() for name, p in model.named_parameters()}
    tensors.update(model.named_buffers())  # running statistics included: check::fingerprints skips them
    return tensors


def _strings(value, what):
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TypeError(f"load_inline: {what} must be a string or a list of strings")


def load_inline(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None, extra_cuda_cflags=None,
                extra_ldflags=None, extra_include_paths=None, build_directory=None, verbose=False, with_cuda=None,
                is_python_module=True, with_pytorch_error_handling=True, keep_intermediates=True, use_pch=False,
                **ignored):
    """torch.utils.cpp_extension.load_inline as kbench runs it: the sources are built once per
    content (and toolchain and GPU architecture) into kbench's cache, in a separate process; the
    module is then imported from there. build_directory, verbose and the like have no effect."""
    import kbench_native  # the C++ side, embedded in kbench

    if not is_python_module:
        raise RuntimeError(UNSUPPORTED + "load_inline(is_python_module=False) is not supported: kbench imports "
                           "the extension as a Python module")
    if isinstance(functions, dict):
        functions = list(functions)
    spec = {"name": str(name), "cpp_sources": _strings(cpp_sources, "cpp_sources"),
            "cuda_sources": _strings(cuda_sources, "cuda_sources"), "functions": _strings(functions, "functions"),
            "extra_cflags": _strings(extra_cflags, "extra_cflags"),
            "extra_cuda_cflags": _strings(extra_cuda_cflags, "extra_cuda_cflags"),
            "extra_ldflags": _strings(extra_ldflags, "extra_ldflags"),
            "extra_include_paths": _strings(extra_include_paths, "extra_include_paths"),
            "with_cuda": with_cuda if with_cuda is None else bool(with_cuda),
            "with_pytorch_error_handling": bool(with_pytorch_error_handling)}
    built = _json_loads(kbench_native.build_extension(_json_dumps(spec)))
    if not built["ok"]:
        raise RuntimeError(f"Error building extension '{name}':\n{built['log']}")
    return _execute(built["path"], built["module"])


def load(*args, **kwargs):
    raise RuntimeError(UNSUPPORTED + "torch.utils.cpp_extension.load (sources in files) is not supported: "
                       "kbench builds the sources given to load_inline")


def environment():
    """For kbench doctor: what a ModelNew runs with, and what its builds need that may be missing."""
    import shutil
    ninja = shutil.which("ninja", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    return {"python": sys.version.split()[0], "executable": sys.executable, "torch": torch.__version__,
            "torch_cuda": torch.version.cuda or "", "ninja": ninja or "", "cuda_home": _cpp_extension.CUDA_HOME or ""}


def build_extension(spec, arch_list, directory, module_name, link_flags):
    """In a build process (not a worker): torch's own load_inline, into `directory`. Returns "" or
    the build's log."""
    os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list
    # Ninja comes with PyTorch's Python (pip installs it beside the interpreter).
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    try:
        _real_load_inline(name=module_name, cpp_sources=spec["cpp_sources"],
                          cuda_sources=spec["cuda_sources"] or None, functions=spec["functions"] or None,
                          extra_cflags=spec["extra_cflags"], extra_cuda_cflags=spec["extra_cuda_cflags"],
                          extra_ldflags=spec["extra_ldflags"] + link_flags,
                          extra_include_paths=spec["extra_include_paths"], build_directory=directory,
                          with_cuda=spec["with_cuda"], verbose=False,
                          with_pytorch_error_handling=spec["with_pytorch_error_handling"])
        return ""
    except Exception as e:  # the compiler's output is in the message
        return f"{type(e).__name__}: {e}"
