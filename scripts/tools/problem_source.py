"""Reads a KernelBench-format problem file: imports it, and turns its get_inputs() into a
TorchScript input generator `make_inputs(device, dist="own")` that C++ can call for any seed on any
device. `dist` names the distribution of the floating-point draws: "own" is the problem's (what
get_inputs() draws); the others are kbench's robustness trials (see REDRAW)."""
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


# Floating-point draws (torch.rand, torch.randn and their _like forms) become _draw(torch.empty...),
# which fills the tensor in place from the distribution asked for, keeping every derivation after
# it (symmetrising, triu, softmax, scaling) and leaving integer draws alone. For "own" it is the
# problem's draw (torch.rand is torch.empty(...).uniform_(), randn is .normal_(): the same values
# for the same seed). The others are kbench's robustness distributions: normal; logistic x 10
# (tails as heavy as Laplace's, exponential); uniform on [-0.1, 0.1]. Each is written once, in
# place (one input set of level 1 reaches 16 GiB, and the timed calls draw one per call), but the
# logistic, whose quantile function (logit) and scale are two more passes.
FLOAT_DRAWS = {"rand": ("empty", True), "rand_like": ("empty_like", True),
               "randn": ("empty", False), "randn_like": ("empty_like", False)}  # name -> (factory, uniform?)
REDRAW = """\
def _draw(x: Tensor, uniform: bool, dist: str) -> Tensor:
    if dist == "own":
        return x.uniform_() if uniform else x.normal_()
    if dist == "normal":
        return x.normal_()
    if dist == "logistic_x10":
        return x.uniform_(1e-7, 1.0 - 1e-7).logit_().mul_(10.0)
    assert dist == "uniform_pm0.1", "unknown input distribution: " + dist
    return x.uniform_(-0.1, 0.1)

"""


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
        is_torch = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "torch"
        if is_torch and func.attr in TENSOR_FACTORIES and not any(k.arg == "device" for k in node.keywords):
            node.keywords.append(ast.keyword(arg="device", value=ast.Name(id="device", ctx=ast.Load())))
        if is_torch and func.attr in FLOAT_DRAWS:
            factory, uniform = FLOAT_DRAWS[func.attr]
            func.attr = factory
            return ast.copy_location(
                ast.Call(func=ast.Name(id="_draw", ctx=ast.Load()),
                         args=[node, ast.Constant(value=uniform), ast.Name(id="dist", ctx=ast.Load())], keywords=[]),
                node)
        return node

    def visit_Return(self, node):
        self.generic_visit(node)
        # A tuple keeps mixed element types (a tensor and a float) that a list cannot hold.
        if isinstance(node.value, ast.List):
            node.value = ast.Tuple(elts=node.value.elts, ctx=ast.Load())
        return node


def input_generator_source(path, module=None):
    """TorchScript source of `make_inputs(device, dist)` (after the _draw helper it calls),
    equivalent to the file's get_inputs() for dist "own"."""
    module = module or load_module(path)
    tree = ast.parse(Path(path).read_text())
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"]
    if len(functions) != 1:
        raise ValueError("expected exactly one get_inputs() at module level")
    fn = functions[0]
    fn.name = "make_inputs"
    fn.args = ast.parse('def f(device: Device, dist: str = "own"): pass').body[0].args
    fn.returns = None
    fn.decorator_list = []
    fn = _ToGenerator(_constants(tree, module)).visit(fn)
    return REDRAW + ast.unparse(ast.fix_missing_locations(fn)) + "\n"


def seeded_inputs(generator, device, seed):
    """The generator's inputs for `seed`, as a list. CUDA is initialised first: until Python has
    initialised it, torch.manual_seed only queues the CUDA generators' seeding, and a TorchScript
    generator's torch.rand(device="cuda") does not initialise it, so a model without parameters
    (nothing moved to the GPU before) got inputs that did not follow the seed (seen on the H100:
    two calls with seed 1 gave different inputs)."""
    import torch
    if torch.device(device).type == "cuda":
        torch.cuda.init()
    torch.manual_seed(seed)
    made = generator(device)
    return list(made) if isinstance(made, (tuple, list)) else [made]


def compile_input_generator(source):
    import torch
    return torch.jit.CompilationUnit(source).make_inputs
