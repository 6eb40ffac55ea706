"""Reads a KernelBench-format problem file: imports it, and turns its get_inputs() into a
TorchScript input generator `make_inputs(device)` that C++ can call for any seed on any device."""
import ast
import hashlib
import importlib.util
import sys
from pathlib import Path

# Tensor factories whose result lands on `device` once the generator adds the keyword.
TENSOR_FACTORIES = {
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "zeros", "ones", "empty",
    "full", "arange", "linspace", "eye", "tensor", "zeros_like", "ones_like", "full_like",
}


def source_sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_module(path):
    """Imports a problem file under a unique module name (several share names like Model)."""
    path = Path(path)
    name = "kbench_problem_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _constants(tree, module):
    """Module-level names bound to plain numbers, strings or tuples of them."""
    values = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    value = getattr(module, target.id, None)
                    if _is_plain(value):
                        values[target.id] = value
    return values


def _is_plain(value):
    if isinstance(value, bool) or isinstance(value, (int, float, str)):
        return True
    if isinstance(value, (tuple, list)):
        return all(_is_plain(v) for v in value)
    return False


class _ToGenerator(ast.NodeTransformer):
    def __init__(self, constants):
        self.constants = constants
        self.local_names = set()

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            self.local_names.add(node.id)
            return node
        if node.id in self.constants and node.id not in self.local_names:
            value = self.constants[node.id]
            if isinstance(value, list):
                value = tuple(value)
            return ast.copy_location(ast.parse(repr(value), mode="eval").body, node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        is_factory = (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                      and func.value.id == "torch" and func.attr in TENSOR_FACTORIES)
        if is_factory and not any(k.arg == "device" for k in node.keywords):
            node.keywords.append(ast.keyword(arg="device", value=ast.Name(id="device", ctx=ast.Load())))
        return node

    def visit_Return(self, node):
        self.generic_visit(node)
        # A tuple keeps mixed element types (a tensor and a float) that a list cannot hold.
        if isinstance(node.value, ast.List):
            node.value = ast.Tuple(elts=node.value.elts, ctx=ast.Load())
        return node


def input_generator_source(path, module=None):
    """TorchScript source of `make_inputs(device)`, equivalent to the file's get_inputs()."""
    module = module or load_module(path)
    tree = ast.parse(Path(path).read_text())
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"]
    if len(functions) != 1:
        raise ValueError("expected exactly one get_inputs() at module level")
    fn = functions[0]
    fn.name = "make_inputs"
    fn.args = ast.parse("def f(device: Device): pass").body[0].args
    fn.returns = None
    fn.decorator_list = []
    fn = _ToGenerator(_constants(tree, module)).visit(fn)
    return ast.unparse(ast.fix_missing_locations(fn)) + "\n"


def compile_input_generator(source):
    import torch
    return torch.jit.CompilationUnit(source).make_inputs
