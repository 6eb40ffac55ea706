#!/usr/bin/env python3
"""Benchmark of kbench serve on a GPU machine (scripts/bench/serve-bench.sh runs it after the build).
Prints figures beside the issue's goals; asserts nothing.

  latency     warm request latency, p50 over 20 requests, for the reference kernels of L3#4, L2#12
              and L1#19, beside the GPU work each record shows: kernels, and the timed calls' input
              draws and checks (goal: p50 <= GPU work + 0.25 s)
  throughput  the 200-submission mix (scripts/bench/throughput-mix.sh) sent by 32 concurrent clients:
              submissions per hour and GPU idle, beside kbench batch on the same mix in the same run
              (goal: >= 5,000 per hour and idle < 5%)
  scaling     the same mix through 32 clients on one GPU, then on every visible GPU: submissions per
              hour each and their ratio (goal on two GPUs: >= 1.8)
  hostile     1,000 idle and 200 slow-header connections open (from many loopback addresses): health's
              p99 and a warm L3#4 request's p50 beside its quiet p50 (goal: p99 < 100 ms, within 10%);
              health only where no GPU is visible
  killed      the L2#12 reference kernel's worker SIGKILLed from outside mid-request (goal: correct,
              retried), and a ModelNew that SIGKILLs its own worker (goal: crash)
  load        a bounded load test on loopback: 300 requests from 16 clients, a third of them
              malformed, a candidate that kills its worker, SIGTERM while requests are in flight:
              lost requests, hung clients, server memory over time (goal: 0 lost, 0 hung, RSS flat)
  modelnew-warm  L1#19's ReLU as a .cu, the same kernel as a ModelNew (tests/fixtures/modelnew/l1_19_relu.py) and
              as a Triton ModelNew (tests/fixtures/triton/l1_19_relu.py), 2 warm-up requests then 20
              sequential ones each, the extension built and the Triton kernel compiled by the first:
              the first's wall, the p50 and p90 (nearest rank) of each and their differences to the
              .cu (goals: the ModelNew within 0.5 s, the Triton file within 0.3 s), and the slowest
              ModelNew and Triton requests' walls taken apart
  modelnew-cold  one request of L1#19's ReLU ModelNew to a server that has just started, on whatever build
              caches KBENCH_CACHE holds (build-bench.sh section 4 empties them first): its wall, and the
              build's own figures from the record

Usage: serve_bench.py BUILD_DIR OUT_DIR PART...
"""
import http.client
import json
import math
import os
import pathlib
import random
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
CACHE = pathlib.Path(os.environ.get("KBENCH_CACHE", pathlib.Path.home() / ".cache" / "kbench"))


# ---- the server and its clients ---------------------------------------------------------------

class Server:
    """`kbench serve` on a free loopback port, its stderr in OUT_DIR."""

    def __init__(self, kbench, out_dir, name, *args):
        self.log = open(pathlib.Path(out_dir) / f"serve-{name}.log", "w")
        self.proc = subprocess.Popen([kbench, "serve", "--port", "0", "--json", *args],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            raise SystemExit(f"kbench serve did not start: see {self.log.name}")
        self.url = json.loads(line)["listening"]

    def health(self):
        return get_json(self.url + "/v1/health")

    def rss_mib(self):
        try:
            for line in open(f"/proc/{self.proc.pid}/status"):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return None

    def stop(self, timeout=300):
        """SIGTERM; the exit code (None: killed after `timeout`), the seconds until it exited, and
        what it said it served (its last line: {"drained": <health>})."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return None, timeout, {}
        lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return self.proc.returncode, time.monotonic() - t0, lines[-1].get("drained", {}) if lines else {}


def get_json(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read())


def post(url, body, timeout=600):
    """(outcome, status, JSON answer) where outcome is "answered", "refused" (nothing listens),
    "lost" (the connection ended without an answer) or "hung" (no answer within `timeout`)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url + "/v1/eval", data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return "answered", r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        try:
            return "answered", e.code, json.loads(e.read())
        except (ValueError, OSError, http.client.HTTPException):
            return "lost", e.code, None
    except urllib.error.URLError as e:
        if isinstance(e.reason, ConnectionRefusedError):
            return "refused", None, None
        if isinstance(e.reason, TimeoutError):
            return "hung", None, None
        return "lost", None, {"error": str(e.reason)}
    except TimeoutError:
        return "hung", None, None
    except (ConnectionError, http.client.HTTPException, OSError) as e:
        return "lost", None, {"error": repr(e)}


def submission(path, level, problem, options=None):
    return {"source": pathlib.Path(path).read_text(), "level": level, "problem": problem,
            "name": str(path), "options": options or {}}


class GpuSampler:
    """nvidia-smi's utilisation every 500 ms of the GPUs `ids` (default: all); idle = the share of
    samples at 0%, each GPU's sample counted, so that a GPU left unused is not counted."""

    def __init__(self, ids=None):
        self.ids = ids

    def __enter__(self):
        self.file = tempfile.TemporaryFile("w+")
        self.proc = None
        if shutil.which("nvidia-smi"):
            select = ["-i", ",".join(map(str, self.ids))] if self.ids else []
            self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                                          *select, "-lms", "500"], stdout=self.file, stderr=subprocess.DEVNULL)
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.terminate()
            self.proc.wait()
        self.file.seek(0)
        self.samples = [int(x) for x in self.file.read().split() if x.strip().isdigit()]

    def idle(self):
        return 100 * sum(1 for u in self.samples if u == 0) / max(1, len(self.samples))


def median(values):
    return statistics.median(values) if values else float("nan")


def p90(values):
    """The nearest-rank 90th percentile: the 18th of 20 values, the 9th of 10."""
    return sorted(values)[math.ceil(.9 * len(values)) - 1] if values else float("nan")


def export(problems):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "tools" / "export_problems.py"), "--only", *problems],
                   check=True, stdout=subprocess.DEVNULL)


# ---- latency ----------------------------------------------------------------------------------

def kernel_ms(record):
    """The candidate and reference calls the request made, at their timed means: the trials (one
    candidate call each, and one reference call where its output was not kept), the timed calls and
    the checked ones' reference calls, and the eager reference's timed calls where it was timed here
    (not reused)."""
    t = record.get("timing", {})
    if "candidate" not in t or "eager" not in t:
        return None
    candidate, eager = t["candidate"]["mean_ms"], t["eager"]["mean_ms"]
    protocol = t["candidate"].get("protocol", {})
    calls = protocol.get("timed_calls", t["candidate"]["num_trials"]) + 3  # and the warm-up
    trials = len(record.get("correctness", {}).get("trials", []))
    computed = trials - record.get("reference_outputs", {}).get("reused", 0)
    eager_timed = 0 if t.get("eager_reused") else calls
    return (calls * candidate + trials * candidate + computed * eager + eager_timed * eager
            + protocol.get("checked", 0) * eager)


def protocol_ms(record):
    """The rest of the timed calls' GPU work: the inputs drawn before each call and for each check,
    and the checks' comparisons (the record's redraw_ms and checks_ms, less the checks' reference
    calls, which kernel_ms counts)."""
    t = record.get("timing", {})
    if "candidate" not in t or "eager" not in t:
        return None
    protocol = t["candidate"].get("protocol", {})
    return (protocol.get("redraw_ms", 0) + protocol.get("checks_ms", 0)
            - protocol.get("checked", 0) * t["eager"]["mean_ms"])


def latency(kbench, out_dir):
    cases = [("level3/4_LeNet5.cu", 3, 4), ("level2/12_Gemm_Multiply_LeakyReLU.cu", 2, 12), ("level1/19_ReLU.cu", 1, 19)]
    export([f"{l}:{p}" for _, l, p in cases])
    server = Server(kbench, out_dir, "latency")
    print("warm request latency, 20 sequential requests each after 2 warm-up ones (ms; p50 unless said)")
    print(f"{'problem':38s} {'wall':>7s} {'p90':>7s} {'kernels':>8s} {'draws':>6s} {'wall-gpu':>8s} {'goal':>6s}  "
          f"{'worker':>7s} {'check':>6s} {'timing':>7s} {'ablat.':>6s} {'host':>5s} {'load':>5s} {'queue':>5s} {'http':>5s}  verdict")
    rows = []
    for file, level, problem in cases:
        body = submission(ROOT / file, level, problem)
        for _ in range(2):
            post(server.url, body)
        walls, records = [], []
        for _ in range(20):
            t0 = time.perf_counter()
            outcome, status, record = post(server.url, body)
            walls.append((time.perf_counter() - t0) * 1000)
            records.append(record if status == 200 else {})
        kernels = [k for k in map(kernel_ms, records) if k is not None]
        draws = [k for k in map(protocol_ms, records) if k is not None]
        phases = lambda key: median([r.get("phases_ms", {}).get(key, 0) for r in records])
        evaluation = median([r.get("serve", {}).get("evaluation_ms", 0) for r in records])
        wall, kern, draw = median(walls), median(kernels), median(draws)
        gpu = kern + draw
        met = "met" if wall <= gpu + 250 else f"+{(wall - gpu - 250) / 1000:.2f}s"
        print(f"{file:38s} {wall:7.0f} {p90(walls):7.0f} {kern:8.0f} {draw:6.0f} {wall - gpu:8.0f} {met:>6s}  "
              f"{phases('total'):7.0f} {phases('correctness'):6.0f} {phases('timing'):7.0f} {phases('ablation'):6.0f} "
              f"{phases('host_compile'):5.0f} {phases('problem_load'):5.0f} "
              f"{median([r.get('serve', {}).get('queued_ms', 0) for r in records]):5.0f} {wall - evaluation:5.0f}  "
              f"{records[-1].get('verdict', status)}")
        rows.append({"file": file, "walls_ms": walls, "records": records})
    print("kernels: the request's candidate and reference calls at their timed means (5+3 trials, 3 warm-up and 109")
    print("timed calls, the reference for each checked call); draws: the timed calls' input draws and the checks' draws")
    print("and comparisons (the record's redraw_ms + checks_ms less the checks' reference calls);")
    print("worker: the record's phases_ms.total; queue: admitted to evaluated (NVRTC from the cache); http: wall minus")
    print("the runner's evaluation (client, HTTP, JSON); goal: wall <= kernels + draws + 250 ms")
    json.dump(rows, open(pathlib.Path(out_dir) / "serve-latency.json", "w"))
    server.stop()


# ---- throughput -------------------------------------------------------------------------------

def mix_jobs(mix_dir):
    jobs = []
    for f in sorted(mix_dir.iterdir(), key=lambda p: int(p.name.split("_")[5])):  # in the mix's order
        parts = f.name.split("_")
        jobs.append((f, int(parts[1]), int(parts[3])))
    return jobs


MIX_BUDGETS = ["--check-budget", "30", "--timing-budget", "120"]  # as throughput-bench.sh


def the_mix():
    """The 200-submission mix (scripts/bench/throughput-mix.sh), its problems exported."""
    mix_dir = pathlib.Path(tempfile.mkdtemp()) / "mix"
    subprocess.run([str(ROOT / "scripts" / "bench" / "throughput-mix.sh"), str(mix_dir), "200"], check=True)
    jobs = mix_jobs(mix_dir)
    export(sorted({f"{l}:{p}" for _, l, p in jobs}))
    return mix_dir, jobs


def serve_mix(kbench, out_dir, name, jobs, clients, *args, gpu_ids=None):
    """The mix through a fresh `kbench serve` (with `args`) from `clients` concurrent clients, NVRTC
    from cold: {file name: (outcome, status, record, seconds)}, the wall time, the server's health
    once drained, and the utilisation of the GPUs `gpu_ids` (default: all). $MIX_TIMING (fixed, adaptive) is each request's
    `timing` option where set."""
    options = {"timing": os.environ["MIX_TIMING"]} if os.environ.get("MIX_TIMING") else None
    shutil.rmtree(CACHE / "compile", ignore_errors=True)
    server = Server(kbench, out_dir, name, *args)
    pending, results, lock = list(reversed(jobs)), {}, threading.Lock()

    def client():
        while True:
            with lock:
                if not pending:
                    return
                file, level, problem = pending.pop()
            t0 = time.monotonic()
            outcome, status, record = post(server.url, submission(file, level, problem, options))
            with lock:
                results[file.name] = (outcome, status, record or {}, time.monotonic() - t0)

    with GpuSampler(gpu_ids) as gpu:
        t0 = time.monotonic()
        threads = [threading.Thread(target=client) for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
    _, _, health = server.stop()
    return results, wall, health, gpu


def throughput(kbench, out_dir, clients=32):
    mix_dir, jobs = the_mix()
    budgets = MIX_BUDGETS

    shutil.rmtree(CACHE / "compile", ignore_errors=True)  # both runs compile from cold
    batch_out = pathlib.Path(out_dir) / "serve-bench-batch.jsonl"
    batch_out.unlink(missing_ok=True)
    with GpuSampler() as batch_gpu:
        t0 = time.monotonic()
        subprocess.run([kbench, "batch", str(mix_dir), "--out", str(batch_out), *budgets], stdout=subprocess.DEVNULL)
        batch_wall = time.monotonic() - t0
    batch = {pathlib.Path(r["submission"]["path"]).name: r for r in map(json.loads, open(batch_out))}

    results, serve_wall, health, serve_gpu = serve_mix(kbench, out_dir, "throughput", jobs, clients, *budgets)
    with open(pathlib.Path(out_dir) / "serve-bench-serve.jsonl", "w") as f:
        for name, (_, status, record, _) in results.items():
            f.write(json.dumps({"file": name, "status": status, **record}) + "\n")

    answered = sum(1 for o, s, _, _ in results.values() if s == 200)
    same = [n for n, (_, s, r, _) in results.items() if n in batch and r.get("verdict") == batch[n].get("verdict")]
    differ = [(n, batch.get(n, {}).get("verdict"), r.get("verdict", s)) for n, (_, s, r, _) in results.items() if n not in same]
    waits = sorted(r.get("serve", {}).get("queued_ms", 0) / 1000 for _, _, r, _ in results.values())
    print(f"the 200-submission mix ({len(jobs)} files, {len({(l, p) for _, l, p in jobs})} problems)")
    print(f"  kbench batch:              {len(batch):3d} records in {batch_wall:6.1f} s = {3600 * len(batch) / batch_wall:5.0f} per hour, "
          f"GPU idle {batch_gpu.idle():4.1f}% of {len(batch_gpu.samples)} samples")
    print(f"  kbench serve, {clients} clients: {answered:3d} answered in {serve_wall:6.1f} s = {3600 * answered / serve_wall:5.0f} per hour, "
          f"GPU idle {serve_gpu.idle():4.1f}% of {len(serve_gpu.samples)} samples")
    print(f"  goal: >= 5000 per H100-hour with GPU idle < 5%; the verdict is batch's for {len(same)} of {len(results)}")
    for name, b, s in differ[:8]:
        print(f"    differs: {name}: batch {b}, serve {s}")
    busy = sum(w["busy_s"] for w in health.get("workers", []))
    print(f"  serve: time queued (admitted to evaluated) p50 {waits[len(waits) // 2]:.1f} s, p90 {p90(waits):.1f} s; "
          f"runners busy {busy:.1f} s; worker processes started {sum(w['workers_started'] for w in health.get('workers', []))} "
          f"(spares included); HTTP answers {health.get('responses')}")
    # What the spare worker saves: a process start with libtorch loaded per restart (a fresh worker's
    # first record has worker_evaluations 1; the first worker of each GPU is not a restart).
    starts = []
    for _ in range(3):
        t = time.monotonic()
        subprocess.run([kbench, "--version"], stdout=subprocess.DEVNULL)
        starts.append(time.monotonic() - t)
    for label, records in (("batch", list(batch.values())), ("serve", [r for _, _, r, _ in results.values()])):
        restarts = sum(1 for r in records if r.get("worker_evaluations") == 1) - len(health.get("workers", [1]))
        print(f"  {label}: {restarts} worker restarts, each onto a spare started ahead: about {restarts * median(starts):.1f} s "
              f"of process starts off the GPU's path (kbench --version: {1000 * median(starts):.0f} ms)")
    # What a second worker per GPU could hide: the CPU phases of each evaluation's worker.
    cpu = [sum(r.get("phases_ms", {}).get(k, 0) for k in ("problem_load", "environment", "nvrtc", "host_compile"))
           for _, _, r, _ in results.values()]
    print(f"  worker CPU phases before the GPU (problem load, environment, NVRTC from cache, host compile): "
          f"p50 {median(cpu):.0f} ms, total {sum(cpu) / 1000:.1f} s")


# ---- load -------------------------------------------------------------------------------------

def load_test(kbench, out_dir, total=300, clients=16, sigterm_after=240):
    export(["1:19", "1:21"])
    sub = ROOT / "tests" / "fixtures" / "submissions"
    quick = {"timing_trials": 10}
    kinds = {  # name: (body, statuses it may get before SIGTERM)
        "relu": (submission(ROOT / "level1/19_ReLU.cu", 1, 19, quick), {200}),
        "sigmoid": (submission(ROOT / "level1/21_Sigmoid.cu", 1, 21, quick), {200}),
        "value_mismatch": (submission(sub / "l1_19_value_mismatch.cu", 1, 19, quick), {200}),
        "compile_error": (submission(sub / "l1_19_compile_error.cu", 1, 19, quick), {200}),
        "kills_worker": (submission(ROOT / "tests/fixtures/adversarial/trap.cu", 1, 21, quick), {200}),
        "not_json": (b'{"source": "x", "level": ', {400}),
        "unknown_option": (submission(ROOT / "level1/19_ReLU.cu", 1, 19, {"trails": 3}), {400}),
        "unknown_problem": (submission(ROOT / "level1/19_ReLU.cu", 1, 999), {404}),
        "too_large": ({"source": "x" * (300 << 10), "level": 1, "problem": 19}, {413}),
    }
    weights = {"relu": 30, "sigmoid": 15, "value_mismatch": 15, "compile_error": 10, "kills_worker": 5,
               "not_json": 8, "unknown_option": 7, "unknown_problem": 5, "too_large": 5}
    rng = random.Random(1)
    schedule = rng.choices(list(weights), weights=list(weights.values()), k=total)
    server = Server(kbench, out_dir, "load", "--max-queue", "32", "--max-source-kib", "256",
                    "--check-budget", "30", "--timing-budget", "60")
    rss, done, sigterm_at, lock = [], [], [None], threading.Lock()
    stop_sampling = threading.Event()

    def sample_rss():
        while not stop_sampling.is_set():
            value = server.rss_mib()
            if value is not None:
                rss.append((time.monotonic(), value, len(done)))
            stop_sampling.wait(0.5)

    pending = list(reversed(list(enumerate(schedule))))

    def client():
        while True:
            with lock:
                if not pending:
                    return
                i, kind = pending.pop()
            outcome, status, answer = post(server.url, kinds[kind][0], timeout=600)
            with lock:  # whether SIGTERM had been sent when the answer came
                done.append((i, kind, outcome, status, sigterm_at[0] is not None, (answer or {}).get("verdict")))

    sampler = threading.Thread(target=sample_rss)
    sampler.start()
    t0 = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    while len(done) < sigterm_after and any(t.is_alive() for t in threads):
        time.sleep(0.05)
    sigterm_at[0] = time.monotonic()
    code, drain_s, drained = server.stop(timeout=600)
    for t in threads:
        t.join()
    stop_sampling.set()
    sampler.join()

    # Lost: an evaluation the server answered that no client received, or a connection that ended
    # without an answer before the shutdown (after it, a connection still in the listener's backlog
    # is reset: never admitted). Hung: no answer in 600 s.
    by_kind, unexpected = {}, []
    for i, kind, outcome, status, after, verdict in done:
        key = f"{outcome} {status or ''}".strip()
        by_kind.setdefault(kind, {}).setdefault(key, 0)
        by_kind[kind][key] += 1
        shutting_down = after and (outcome in ("refused", "lost") or status == 503)
        if outcome == "answered" and status not in kinds[kind][1] and status != 429 and not shutting_down:
            unexpected.append((i, kind, status))
    received = sum(1 for _, kind, o, s, _, _ in done if s == 200)
    served = drained.get("evaluations", {}).get("served")
    lost_before = [(i, kind) for i, kind, o, _, after, _ in done if o == "lost" and not after]
    hung = [(i, kind) for i, kind, o, _, _, _ in done if o == "hung"]
    print(f"load test: {len(done)} of {total} requests from {clients} clients in {time.monotonic() - t0:.1f} s; "
          f"SIGTERM after {sigterm_after} answers")
    for kind in weights:
        print(f"  {kind:16s} {by_kind.get(kind, {})}")
    print(f"  lost: evaluations the server answered {served}, records clients received {received} "
          f"(lost {'?' if served is None else served - received}); connections ended without an answer before "
          f"SIGTERM: {len(lost_before)} {lost_before[:5]}")
    print(f"  hung (no answer in 600 s): {len(hung)}; unexpected statuses: {len(unexpected)} {unexpected[:5]}")
    print(f"  server: exit code {code}, {drain_s:.1f} s from SIGTERM to exit; worker processes started "
          f"{sum(w['workers_started'] for w in drained.get('workers', []))}; answers {drained.get('responses')}")
    if rss:
        span = [r for r in rss if r[0] < sigterm_at[0]]
        at = lambda q: span[min(len(span) - 1, int(q * len(span)))] if span else (0, 0, 0)
        print("  server RSS (MiB) at 10/25/50/75/100% of the run before SIGTERM: " +
              ", ".join(f"{at(q)[1]:.0f} ({at(q)[2]} answered)" for q in (0.1, 0.25, 0.5, 0.75, 0.999)) +
              f"; max {max(r[1] for r in rss):.0f}")
    json.dump({"done": done, "rss": rss, "drained": drained}, open(pathlib.Path(out_dir) / "serve-load.json", "w"))

# ---- scaling ----------------------------------------------------------------------------------

def visible_gpus():
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
                         capture_output=True, text=True).stdout.strip()
    return int(out) if out.isdigit() else 0


def scaling(kbench, out_dir, clients=32):
    gpus = visible_gpus()
    _, jobs = the_mix()
    print(f"the 200-submission mix through {clients} clients: one GPU, then all {gpus} visible "
          "(CUDA_VISIBLE_DEVICES picks them), NVRTC from cold each time")
    runs = [("one GPU", ["--gpus", "0"], [0])] + ([(f"{gpus} GPUs", [], None)] if gpus > 1 else [])
    per_hour = []
    for label, args, ids in runs:
        results, wall, health, gpu = serve_mix(kbench, out_dir, f"scaling-{len(per_hour) + 1}", jobs, clients,
                                               *MIX_BUDGETS, *args, gpu_ids=ids)
        answered = sum(1 for _, s, _, _ in results.values() if s == 200)
        per_hour.append(3600 * answered / wall)
        busy = ", ".join(f"GPU {w['device']} {w['busy_s']:.0f} s ({w['evaluations']} evaluations)" for w in health.get("workers", []))
        # A problem's baselines are timed once on each GPU that evaluates it.
        gpus_of = {}
        for _, status, record, _ in results.values():
            if status == 200 and "eager" in record.get("timing", {}):
                gpus_of.setdefault(f"{record['problem']['level']}/{record['problem']['id']}", set()).add(record["serve"]["gpu"])
        shared = sum(1 for g in gpus_of.values() if len(g) > 1)
        print(f"  {label:8s}: {answered:3d} answered in {wall:6.1f} s = {per_hour[-1]:5.0f} per hour, GPU idle {gpu.idle():4.1f}% "
              f"of {len(gpu.samples)} samples; runners busy: {busy}; {len(gpus_of)} problems timed, {shared} on more than one GPU")
    if len(per_hour) > 1:
        print(f"  ratio {gpus} GPUs / one: {per_hour[1] / per_hour[0]:.2f} (goal on two GPUs: >= 1.8)")
    else:
        print("  one GPU visible: no ratio")


# ---- hostile connections ------------------------------------------------------------------------

def connect_from(source, port):
    """A TCP connection to the server from `source` (any 127.x.y.z is this machine), or None."""
    import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((source, 0))
        s.settimeout(10)
        s.connect(("127.0.0.1", port))
        return s
    except OSError:
        s.close()
        return None


def health_ms(url):
    t0 = time.perf_counter()
    try:
        get_json(url + "/v1/health")
        return (time.perf_counter() - t0) * 1000
    except (OSError, ValueError, http.client.HTTPException):
        return float("inf")


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def hostile(kbench, out_dir, idle=1000, slow=200, probes=200, requests=20):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # this client's 1,200 connections
    if visible_gpus() == 0:
        requests = 0  # health only: anywhere, a CPU machine included
    else:
        export(["3:4"])
    server = Server(kbench, out_dir, "hostile")
    port = int(server.url.rsplit(":", 1)[1])
    lenet = submission(ROOT / "level3/4_LeNet5.cu", 3, 4)

    def lenet_ms(n):
        walls = []
        for _ in range(n):
            t0 = time.perf_counter()
            _, status, _ = post(server.url, lenet)
            walls.append((time.perf_counter() - t0) * 1000 if status == 200 else float("inf"))
        return walls

    for _ in range(2 if requests else 0):
        post(server.url, lenet)
    quiet_health = [health_ms(server.url) for _ in range(50)]
    quiet = lenet_ms(requests)
    # The hostile crowd, spread over addresses as a cluster's clients are (each under the limit per
    # client): idle connections, and slow ones that send a request's headers a byte every 2 s.
    idle_conns = [c for c in (connect_from(f"127.0.1.{i // 100 + 1}", port) for i in range(idle)) if c]
    slow_conns = [c for c in (connect_from(f"127.0.2.{i // 50 + 1}", port) for i in range(slow)) if c]
    header, stop = b"GET /v1/health HTTP/1.1\r\nHost: kbench\r\nX-Slow: " + b"x" * 200, threading.Event()

    def trickle():
        for byte in range(len(header)):
            for c in slow_conns:
                try:
                    c.send(header[byte:byte + 1])
                except OSError:
                    pass
            if stop.wait(2):
                return

    trickler = threading.Thread(target=trickle)
    trickler.start()
    time.sleep(1)
    crowd = server.health().get("connections", {})
    loaded_health, loaded = [], []
    lenet_thread = threading.Thread(target=lambda: loaded.extend(lenet_ms(requests)))
    lenet_thread.start()
    for _ in range(probes):
        loaded_health.append(health_ms(server.url))
        time.sleep(0.02)
    lenet_thread.join()
    after = server.health().get("connections", {})
    stop.set()
    trickler.join()
    for c in idle_conns + slow_conns:
        c.close()
    server.stop()
    print(f"kbench serve with {len(idle_conns)} idle and {len(slow_conns)} slow-header connections open "
          f"(the server counted {crowd.get('open')} open from {crowd.get('clients')} addresses, refused {crowd.get('refused')})")
    print(f"  GET /v1/health, {probes} probes on fresh connections: p50 {percentile(loaded_health, .5):.1f} ms, "
          f"p99 {percentile(loaded_health, .99):.1f} ms, max {max(loaded_health):.1f} ms "
          f"(quiet: p50 {percentile(quiet_health, .5):.1f}, p99 {percentile(quiet_health, .99):.1f} ms); goal p99 < 100 ms")
    if requests:
        ratio = median(loaded) / median(quiet)
        print(f"  warm L3#4 request, {requests} each: quiet p50 {median(quiet):.0f} ms, with the crowd p50 {median(loaded):.0f} ms "
              f"({100 * (ratio - 1):+.1f}%); goal within 10%")
    else:
        print("  no GPU: health only")
    print(f"  connections at the end: {after}")
    json.dump({"quiet_health_ms": quiet_health, "health_ms": loaded_health, "quiet_ms": quiet, "loaded_ms": loaded,
               "connections": after}, open(pathlib.Path(out_dir) / "serve-hostile.json", "w"))


# ---- a worker killed from outside -------------------------------------------------------------

def killed(kbench, out_dir):
    export(["2:12", "1:19"])
    server = Server(kbench, out_dir, "killed")
    gemm = ROOT / "level2/12_Gemm_Multiply_LeakyReLU.cu"
    post(server.url, submission(gemm, 2, 12, {"timing_trials": 10}))  # the problem loaded
    answer = []
    request = threading.Thread(target=lambda: answer.append(post(server.url, submission(gemm, 2, 12, {"timing_trials": 20000}))))
    request.start()
    worker = {}
    for _ in range(500):
        worker = server.health()["workers"][0]
        if worker["busy"]:
            break
        time.sleep(0.01)
    time.sleep(1)
    os.kill(worker["pid"], signal.SIGKILL)  # as the OOM killer or an operator would
    request.join()
    _, status, record = answer[0]
    record = record or {}
    print(f"the L2#12 reference kernel, its worker (pid {worker['pid']}) SIGKILLed from outside 1 s into the request: "
          f"verdict {record.get('verdict', status)}, retried {record.get('retried')}")
    trap = submission(ROOT / "tests/fixtures/modelnew/l1_19_kills_its_worker.py", 1, 19)
    _, status, record = post(server.url, trap)
    record = record or {}
    print(f"a ModelNew that SIGKILLs its own worker: verdict {record.get('verdict', status)} "
          f"({record.get('message', '')[:120]}), retried {bool(record.get('retried'))}")
    print("  goal: the honest kernel correct (retried once), the self-killing submission crash")
    server.stop()


# ---- ModelNew requests beside .cu ones --------------------------------------------------------

def modelnew_warm(kbench, out_dir, requests=20):
    export(["1:19"])
    server = Server(kbench, out_dir, "modelnew-warm", "--gpus", "0")  # one GPU: its spares serve every request
    cases = [(".cu", submission(ROOT / "level1/19_ReLU.cu", 1, 19)),
             ("ModelNew", submission(ROOT / "tests/fixtures/modelnew/l1_19_relu.py", 1, 19)),  # its .py name: a ModelNew
             ("Triton", submission(ROOT / "tests/fixtures/triton/l1_19_relu.py", 1, 19))]
    print(f"On GPU 0 alone: L1#19's ReLU as a .cu, as a ModelNew and as a Triton ModelNew, 2 warm-up requests (the first builds the "
          f"extension, or compiles the Triton kernel: its wall is 'first') then {requests} sequential ones each (ms; "
          f"p50 unless said)")
    print(f"{'format':9s} {'first':>7s} {'wall':>7s} {'p90':>7s} {'worker':>7s} {'python':>7s} {'load':>5s} {'cuda':>5s} "
          f"{'hold':>5s} {'ending':>6s} {'gpu wait':>8s} {'prestarted':>10s} {'waited':>6s} {'prepared':>8s} {'quiet':>5s} "
          f"{'cached':>6s}  verdicts")
    walls_by, per_request = {}, {}
    for label, body in cases:
        t0 = time.perf_counter()
        post(server.url, body)
        first = (time.perf_counter() - t0) * 1000
        post(server.url, body)
        walls, records = [], []
        for _ in range(requests):
            t0 = time.perf_counter()
            _, status, record = post(server.url, body)
            walls.append((time.perf_counter() - t0) * 1000)
            records.append(record if status == 200 else {"verdict": status})
        walls_by[label] = walls
        phase = lambda key: median([r.get("phases_ms", {}).get(key, 0) for r in records])
        gpu_phase = lambda key: median([r.get("phases_ms", {}).get("gpu_prepare", {}).get(key, 0) for r in records])
        worker = [r.get("worker", {}) for r in records]
        cached = sum(1 for r in records if all(e.get("from_cache") for e in r.get("compile", {}).get("extensions", [])))
        verdicts = sorted({str(r.get("verdict")) for r in records})
        print(f"{label:9s} {first:7.0f} {median(walls):7.0f} {p90(walls):7.0f} {phase('total'):7.0f} "
              f"{phase('python_start'):7.0f} {phase('modelnew_load'):5.0f} "
              f"{gpu_phase('cuda_context'):5.0f} {gpu_phase('memory_hold'):5.0f} "
              f"{gpu_phase('ending_process_wait') + phase('ending_process_wait'):6.0f} "
              f"{phase('gpu_wait'):8.0f} {sum(1 for w in worker if w.get('python_prestarted')):>7d}/{len(records):<2d} "
              f"{median([w.get('python_prestart_wait_ms', 0) + w.get('gpu_prepare_wait_ms', 0) for w in worker]):6.0f} "
              f"{sum(1 for w in worker if w.get('gpu_prepared_ahead')):>5d}/{len(records):<2d} {phase('quiet_wait'):5.0f} "
              f"{cached:>3d}/{len(records):<2d}  {', '.join(verdicts)}")
        json.dump(records, open(pathlib.Path(out_dir) / f"serve-modelnew-warm-{label.strip('.').lower()}.json", "w"))
        per_request[label] = list(zip(walls, records))
    # Where each request's wall went, in the order sent: the tail's causes, and how far ahead of its
    # request each spare was ready (a queue of spares shows as a growing "ready" lead).
    for label in ("ModelNew", "Triton"):
        print(f"  {label}, request by request (ms): wall, the runner's take of a process (the spare's waits in it),"
              f" the worker's phases_ms.total, quiet, ending (the last process's kill before the request, and its"
              f" end's length); the pool found (spares/wanted); the spare's start, Python and GPU preparation done,"
              f" before the request; its preparation's parts and their quiet-lock wait")
        for wall, r in per_request[label]:
            runner, w, ph = r.get("phases_ms", {}).get("runner", {}), r.get("worker", {}), r.get("phases_ms", {})
            pool, line = w.get("pool_at_take", {}), w.get("spare_timeline_ms", {})
            ahead = ph.get("gpu_prepare_ahead", {})
            end = runner.get("previous_end", {})
            parts = " ".join(f"{k} {ahead[k]:.0f}" for k in ("cuda_context", "reference_to_gpu", "process_snapshot", "triton")
                             if isinstance(ahead.get(k), (int, float)))
            print(f"    {wall:6.0f} {runner.get('take_worker', 0):5.0f} (python {w.get('python_prestart_wait_ms', 0):4.0f},"
                  f" gpu {w.get('gpu_prepare_wait_ms', 0):4.0f}) {ph.get('total', 0):5.0f} {ph.get('quiet_wait', 0):4.0f}"
                  f" {ph.get('ending_process_wait', 0):4.0f} (killed {end.get('killed_before_request', 0):4.0f} before, took"
                  f" {end.get('took', 0):4.0f})  pool {pool.get('spares', '-')}/{pool.get('wanted', '-')}"
                  f"  start {line.get('started', 0):5.0f} python {line.get('python_started', 0):5.0f}"
                  f" gpu {line.get('gpu_prepared', 0):5.0f}  [{parts}; quiet {ahead.get('quiet_wait', 0):.0f}]")
    for label, goal in (("ModelNew", 0.5), ("Triton", 0.3)):
        difference = (median(walls_by[label]) - median(walls_by[".cu"])) / 1000
        tail = (p90(walls_by[label]) - p90(walls_by[".cu"])) / 1000
        print(f"  {label} - .cu: {difference:+.2f} s at the p50, {tail:+.2f} s at the p90 (goal: <= {goal} s)")
    print("  first: the first request of the file; worker: the record's phases_ms.total; python:")
    print("  phases_ms.python_start (torch.cuda's set-up alone where prestarted); load: modelnew_load; cuda: the CUDA")
    print("  context's start; hold: the free memory held for poisoning; ending: the wait for the last ModelNew's")
    print("  process to end; prestarted: requests whose worker had started Python ahead; waited: for that start and")
    print("  the GPU's preparation (p50); prepared: requests whose spare had prepared its GPU ahead; quiet: the timed")
    print("  calls' wait for the GPU's quiet lock (p50); cached: requests whose extensions all came from the cache")
    _, _, drained = server.stop()
    print(f"  worker processes started {sum(w['workers_started'] for w in drained.get('workers', []))}")


def modelnew_cold(kbench, out_dir):
    export(["1:19"])
    server = Server(kbench, out_dir, "modelnew-cold", "--gpus", "0")
    t0 = time.perf_counter()
    _, status, record = post(server.url, submission(ROOT / "tests/fixtures/modelnew/l1_19_relu.py", 1, 19))
    wall = time.perf_counter() - t0
    record = record or {}
    builds = record.get("compile", {}).get("extensions", [])
    build = {k: builds[0].get(k) for k in ("seconds", "cpu_seconds", "headers", "pch", "from_cache")} if builds else {}
    print(f"  kbench serve, one request: wall {wall:.1f} s, verdict {record.get('verdict', status)} - the build: {build}")
    server.stop()


def main():
    build, out_dir, parts = sys.argv[1], sys.argv[2], sys.argv[3:] or ["latency", "throughput", "load"]
    pathlib.Path(out_dir).mkdir(parents=True, exist_ok=True)
    kbench = str(pathlib.Path(build).resolve() / "kbench")
    for part in parts:
        t0 = time.monotonic()
        print(f"== {part}")
        {"latency": latency, "throughput": throughput, "load": load_test, "scaling": scaling, "hostile": hostile,
         "killed": killed, "modelnew-warm": modelnew_warm,
         "modelnew-cold": modelnew_cold}[part](kbench, out_dir)
        print(f"   ({time.monotonic() - t0:.0f} s)")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
