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
import re
import shlex
import subprocess
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


def synchronize():
    torch.cuda.synchronize()


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
                no_implicit_headers=False, **ignored):
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
            "with_pytorch_error_handling": bool(with_pytorch_error_handling),
            "no_implicit_headers": bool(no_implicit_headers)}
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


def _torch_load_inline(spec, arch_list, directory, module_name, link_flags):
    os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list
    # Ninja comes with PyTorch's Python (pip installs it beside the interpreter).
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    _real_load_inline(name=module_name, cpp_sources=list(spec["cpp_sources"]),
                      cuda_sources=list(spec["cuda_sources"]) or None, functions=spec["functions"] or None,
                      extra_cflags=spec["extra_cflags"], extra_cuda_cflags=spec["extra_cuda_cflags"],
                      extra_ldflags=spec["extra_ldflags"] + link_flags,
                      extra_include_paths=spec["extra_include_paths"], build_directory=directory,
                      with_cuda=spec["with_cuda"], verbose=False,
                      with_pytorch_error_handling=spec["with_pytorch_error_handling"],
                      # PyTorch 2's: passed only when asked for, which PyTorch 1.13 refuses, as it would
                      **({"no_implicit_headers": True} if spec["no_implicit_headers"] else {}))


def build_extension(spec, arch_list, directory, module_name, link_flags):
    """In a build process (not a worker): torch's own load_inline, into `directory`. Returns "" or
    the build's log."""
    try:
        _torch_load_inline(spec, arch_list, directory, module_name, link_flags)
        return ""
    except Exception as e:  # the compiler's output is in the message
        return f"{type(e).__name__}: {e}"


def load_built(directory, module_name):
    """In a build process, after kbench ran build_plan's build: the library imported as torch's
    load_inline imports what it built (one that does not load, an undefined symbol say, is a failed
    build there). Returns "" or why it did not load."""
    try:
        _cpp_extension._import_module_from_library(module_name, directory, True)
        return ""
    except Exception as e:
        return f"{type(e).__name__}: {e}"


class _BuildFileWritten(Exception):
    """Raised in place of running ninja: torch has decided everything it would build."""


def _nvcc_major(nvcc):
    try:
        out = subprocess.run(shlex.split(nvcc) + ["--version"], capture_output=True, text=True).stdout
    except OSError:
        return 0  # no nvcc: the build says so
    found = re.search(r"release (\d+)\.", out)
    return int(found.group(1)) if found else 0


def _library_found(name, directories, cxx):
    if any(os.path.exists(os.path.join(d, f"lib{name}.so")) for d in directories):
        return True
    try:  # the linker's own directories
        found = subprocess.run(shlex.split(cxx) + [f"-print-file-name=lib{name}.so"], capture_output=True, text=True)
    except OSError:
        return True  # no compiler: the build says so
    return os.path.isabs(found.stdout.strip())


def build_plan(spec, arch_list, directory, module_name, link_flags):
    """In a build process: what torch's own load_inline would build, without building it. torch
    writes the sources (main.cpp with the bindings, cuda.cu) and build.ninja into `directory` as it
    always does; its ninja writer is stopped there and the arguments torch gave it are returned, for
    kbench to run the same compilers with the same flags itself:
      {"cxx", "nvcc", "cflags", "cuda_cflags", "ldflags", "steps": [{"source", "object", "nvcc"}],
       "library", "adaptations": [...], "torch_include": dir, "own_includes": [the user's include flags]}
    or {"fallback": why} when kbench cannot run that build itself (PyTorch's own build then runs).

    The adaptations are the changes kbench makes where torch's recipe cannot build with this
    toolchain (Debian's PyTorch 1.13 with CUDA 13: see README), each said in words."""
    adaptations = []
    with_cuda = spec["with_cuda"] if spec["with_cuda"] is not None else bool(spec["cuda_sources"])
    captured = {}
    real_writer, real_arch_flags = _cpp_extension._write_ninja_file, _cpp_extension._get_cuda_arch_flags

    def writer(**arguments):
        real_writer(**arguments)
        captured.update(arguments)
        raise _BuildFileWritten()

    os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list
    if with_cuda and re.fullmatch(r"\d+\.\d+[a-z]?", arch_list):
        try:
            real_arch_flags()
        except ValueError as e:  # PyTorch before 2.1 knows no 9.0a, 10.0a, 12.0; PyTorch 2 writes them so
            number = arch_list.replace(".", "")
            flags = [f"-gencode=arch=compute_{number},code=sm_{number}"]
            adaptations.append(f"PyTorch {torch.__version__} refuses arch {arch_list} ({e}): kbench passes {flags[0]}")
            _cpp_extension._get_cuda_arch_flags = lambda cflags=None: list(flags)
    _cpp_extension._write_ninja_file = writer
    try:
        _torch_load_inline(spec, arch_list, directory, module_name, link_flags)
        return {"fallback": "torch's load_inline returned without writing a build file"}
    except _BuildFileWritten:
        pass
    except Exception as e:  # PyTorch's own build stops there too, and says why
        return {"fallback": f"torch's load_inline failed before its build ({type(e).__name__}: {e})"}
    finally:
        _cpp_extension._write_ninja_file, _cpp_extension._get_cuda_arch_flags = real_writer, real_arch_flags

    for unsupported in ("post_cflags", "cuda_post_cflags", "cuda_dlink_post_cflags", "sycl_cflags"):
        if captured.get(unsupported):
            return {"fallback": f"torch's build has {unsupported}, which kbench does not run"}
    if getattr(_cpp_extension, "IS_HIP_EXTENSION", False):
        return {"fallback": "a ROCm PyTorch: kbench runs CUDA builds only"}

    # The compilers, as torch wrote them into build.ninja's first lines ("cxx = c++", "nvcc = ...").
    variables = {}
    with open(os.path.join(directory, "build.ninja")) as f:
        for line in f:
            if not line.strip():
                break
            key, _, value = line.partition(" = ")
            variables[key.strip()] = value.strip()

    def stripped(flags):
        return [flag.strip() for flag in flags or []]

    cflags, cuda_cflags, ldflags = (stripped(captured.get(k)) for k in ("cflags", "cuda_cflags", "ldflags"))
    old_standards = ("-std=c++11", "-std=c++14")
    if with_cuda and any(f in old_standards for f in cuda_cflags) and _nvcc_major(variables["nvcc"]) >= 13:
        # Before PyTorch 2.1 torch adds -std=c++14 itself when the user's flags name no standard;
        # CUDA 13's headers need C++17. A standard the user asked for stays.
        added = sum(f in old_standards for f in cuda_cflags) - sum(f in old_standards for f in
                                                                    stripped(spec["extra_cuda_cflags"]))
        for i, flag in enumerate(cuda_cflags):
            if added > 0 and flag in old_standards:
                cuda_cflags[i], added = "-std=c++17", added - 1
                adaptations.append(f"CUDA 13's headers need C++17, PyTorch {torch.__version__} passes nvcc {flag}: "
                                   "kbench passes -std=c++17")
    # A CPU-only PyTorch has no libc10_cuda or libtorch_cuda for the -l flags torch adds.
    directories = [f[2:] for f in ldflags if f.startswith("-L")]
    own = set(stripped(spec["extra_ldflags"]))
    for i, entry in enumerate(ldflags):
        if entry in own:
            continue
        kept = []
        for flag in entry.split():  # an entry may hold several (PyTorch 1.13: "-ltorch_cuda_cu -ltorch_cuda_cpp")
            if flag.startswith("-l") and not _library_found(flag[2:], directories, variables["cxx"]):
                adaptations.append(f"lib{flag[2:]} is in none of {', '.join(directories)} nor the linker's "
                                   f"directories (a CPU-only PyTorch): kbench links without {flag}")
            else:
                kept.append(flag)
        if len(kept) != len(entry.split()):
            ldflags[i] = " ".join(kept)

    steps = [{"source": source, "object": obj, "nvcc": with_cuda and _cpp_extension._is_cuda_file(source)}
             for source, obj in zip(captured["sources"], captured["objects"])]
    # Include directories of the submission's own could hold headers that torch/extension.h includes.
    own_includes = [f"-I{p}" for p in spec["extra_include_paths"]] + [
        f for f in stripped(spec["extra_cflags"]) if f.startswith(("-I", "-isystem", "-iquote", "-idirafter", "-include"))]
    return {"cxx": variables["cxx"], "nvcc": variables.get("nvcc", ""), "cflags": cflags,
            "cuda_cflags": cuda_cflags, "ldflags": ldflags, "steps": steps, "library": captured["library_target"],
            "adaptations": adaptations, "torch_include": _cpp_extension.include_paths()[0],
            "own_includes": own_includes}
