"""kbench's Python side of Triton ModelNew files (triton_runtime.h). Compiled into kbench and run by
its embedded interpreter in kbench's phase, before the submission's code: prepare() pins Triton's
environment and puts kbench's functions in Triton's seams, so that nothing Triton does inside a
submission's call starts a process or writes a file from Python (the audit hook refuses both), and
every stub that launches kernels is one kbench built.

What a submission could rebind (Triton's modules, os, importlib) is looked up here once, at set-up."""
import importlib.util
import os
import sys
import sysconfig

import kbench_triton as _native  # the C++ side, embedded in kbench

_spec_from_file_location = importlib.util.spec_from_file_location
_module_from_spec = importlib.util.module_from_spec
_EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")

# Variables that make Triton load kernels or code from elsewhere, or change what it builds.
_REMOVED = ("TRITON_KERNEL_OVERRIDE", "TRITON_KERNEL_DUMP", "TRITON_CACHE_MANAGER", "TRITON_REMOTE_CACHE_BACKEND",
            "TRITON_INTERPRET", "TRITON_ALWAYS_COMPILE", "TRITON_CACHE_AUTOTUNING", "TRITON_STORE_BINARY_ONLY",
            "TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "PTXAS_OPTIONS", "DISABLE_PTXAS_OPT",
            "TRITON_DEFAULT_FP_FUSION", "MLIR_ENABLE_DUMP", "LLVM_IR_ENABLE_DUMP", "TRITON_DUMP_DIR",
            "TRITON_OVERRIDE_DIR", "CC")

statistics = {"compiles": 0, "cache_hits": 0, "lowering_ms": 0.0}
_state = {}


def _python_include():
    scheme = sysconfig.get_default_scheme()
    return sysconfig.get_paths(scheme="posix_prefix" if scheme == "posix_local" else scheme)["include"]


def compile_module_from_src(src, name, library_dirs=None, include_dirs=None, libraries=None, ccflags=None):
    """Triton's stub builder, as kbench runs it: the C source built by kbench (into its own cache,
    linked to kbench's launch and module-load wrappers), then imported."""
    path = _native.build_module(src, name, _EXT_SUFFIX, list(library_dirs or []),
                                list(include_dirs or []) + [_python_include()], list(libraries or []),
                                list(ccflags or []))
    spec = _spec_from_file_location(name, path)
    module = _module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _refuse_build(*args, **kwargs):
    raise RuntimeError("[kbench:refused] Triton's stubs are built by kbench only")


def _make_cubin(backend, src, metadata, opt, capability):
    """CUDABackend.make_cubin with ptxas run by kbench: the same arguments as Triton's."""
    knobs = _state["knobs"]
    if knobs.compilation.disable_line_info:
        debug = ["-lineinfo", "-suppress-debug-info"]
    else:
        debug = ["-g"] if knobs.nvidia.disable_ptxas_opt else ["-lineinfo"]
    options = [*debug, *([] if opt.enable_fp_fusion else ["--fmad=false"]), "-v",
               *(["--opt-level", "0"] if knobs.nvidia.disable_ptxas_opt else []),
               *(opt.ptx_options.split(" ") if opt.ptx_options else [])]
    ok, out = _native.assemble(src, _state["sm_arch"](capability), options)
    if not ok:
        raise _state["PTXASError"](out.decode(errors="replace"))
    return out


def _cache_manager_class(base):
    class KbenchCacheManager(base):
        """Triton's file cache, its entries written by kbench (into this file's directory only)."""

        def put(self, data, filename, binary=True):
            if not self.cache_dir:
                raise RuntimeError("Could not create or locate cache dir")
            data = data if isinstance(data, bytes) else str(data).encode()
            return _native.cache_put(self.cache_dir, filename, data)
    return KbenchCacheManager


def _listener(*, src, metadata, metadata_group, times, cache_hit):
    if cache_hit:
        statistics["cache_hits"] += 1
    else:
        statistics["compiles"] += 1
        statistics["lowering_ms"] += (times.ir_initialization + times.total_lowering) / 1000.0


def start(home_dir, process_cache_dir, libcuda_dir):
    """Pins Triton's environment, imports it and takes its seams: what needs no GPU nor the file, so
    that a spare worker does it ahead (triton_runtime.h). Until prepare(), the kernel cache is the
    process's own."""
    for name in _REMOVED:
        os.environ.pop(name, None)
    os.environ.update(TRITON_HOME=home_dir, TRITON_CACHE_DIR=process_cache_dir, TRITON_LIBCUDA_PATH=libcuda_dir)
    import triton
    import triton.language  # noqa: F401
    import triton.testing  # noqa: F401  (the autotuner's benchmarker)
    from triton import knobs
    from triton.backends.nvidia import compiler as nvidia_compiler, driver as nvidia_driver
    from triton.compiler import compiler
    from triton.runtime import build, cache, driver
    from triton.runtime.errors import PTXASError

    _state.update(triton=triton, knobs=knobs, compiler=compiler, nvidia_compiler=nvidia_compiler, cache=cache,
                  driver=driver, sm_arch=nvidia_compiler.sm_arch_from_capability, PTXASError=PTXASError)
    nvidia_driver.compile_module_from_src = compile_module_from_src
    build.compile_module_from_src = compile_module_from_src
    knobs.build.impl = _refuse_build
    nvidia_compiler.CUDABackend.make_cubin = _make_cubin
    knobs.cache.manager_class = _cache_manager_class(cache.FileCacheManager)
    knobs.compilation.listener = _listener
    driver.active  # builds cuda_utils, through kbench
    cache.triton_key()


def use_kernel_dir(kernel_dir):
    """The file's own kernel cache, from now on."""
    os.environ["TRITON_CACHE_DIR"] = kernel_dir
    _state["knobs"].cache.dir = kernel_dir


def prepare():
    """After start(), on the GPU: Triton's first use of it (its target, the ptxas version), which
    needs no file. Returns {"version", "ptxas", "arch"}."""
    target = _state["driver"].active.get_current_target()
    _state["compiler"].make_backend(target).hash()  # ptxas --version, remembered by Triton
    return {"version": _state["triton"].__version__, "ptxas": _state["nvidia_compiler"].get_ptxas(target.arch).path,
            "arch": _state["sm_arch"](target.arch)}


def _module_from_path(name, path):
    spec = _spec_from_file_location(name, path)
    module = _module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_check(check_dir):
    """kbench's check kernel (CHECK_KERNEL, written into `check_dir`), compiled into that directory
    and launched once. Returns whether its output is right."""
    knobs = _state["knobs"]
    kernel_dir = knobs.cache.dir
    knobs.cache.dir = check_dir
    try:
        return bool(_module_from_path("kbench_triton_check", os.path.join(check_dir, "kbench_triton_check.py")).run())
    finally:
        knobs.cache.dir = kernel_dir


def uses_triton(module):
    """Whether the submission's module holds Triton: the package or something from it."""
    for value in vars(module).values():
        name = getattr(value, "__name__", "") if isinstance(value, type(sys)) else getattr(value, "__module__", "")
        if isinstance(name, str) and name.split(".")[0] == "triton":
            return True
    return False


CHECK_KERNEL = '''"""kbench's own Triton kernel: launched once at set-up, to see that kbench counts Triton's launches."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_one(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1.0, mask=mask)


def run():
    x = torch.zeros(8, device="cuda")
    _add_one[(1,)](x, 8, BLOCK=8)
    torch.cuda.synchronize()
    return bool((x == 1).all())
'''
