"""Cross-encoder reranking with FlashRank, used only when its model is already on disk.

cogd never lets FlashRank download: without the model files the reranker is
disabled, passes the scores it is given through, and says why in `.status`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent.config import Settings
from agent.providers.ports import CallRecord, CallRecorder, NullRecorder, Ranked

logger = logging.getLogger(__name__)
FLASHRANK_URL = "https://huggingface.co/prithivida/flashrank/resolve/main/{}.zip"


def reranker_cache_dir(settings: Settings) -> Path:
    """reranker.cache_dir, else DATA_DIR/flashrank."""
    configured = settings.reranker.cache_dir
    return Path(configured) if configured else Path(settings.data_dir) / "flashrank"


def flashrank_model_file(model: str, cache_dir: Path) -> tuple[Path | None, str | None]:
    """The model's ONNX file if present, else None and why not."""
    try:
        listwise_rankers, model_file_map = _flashrank_names()
    except ImportError as exc:
        return None, f"disabled: flashrank is not installed ({exc})"
    if model not in model_file_map or model in listwise_rankers:
        valid = ", ".join(sorted(set(model_file_map) - set(listwise_rankers)))
        return None, f"disabled: {model!r} is not a FlashRank cross-encoder; valid: {valid}"
    path = cache_dir / model / model_file_map[model]
    if not path.is_file():
        return None, (
            f"disabled: model {model} not in {cache_dir}; to enable, unzip "
            f"{FLASHRANK_URL.format(model)} into that directory (cogd never downloads it)"
        )
    return path, None


def _flashrank_names() -> tuple[Any, Any]:
    """FlashRank's listwise rankers and model files (flashrank/Config.py, which imports
    nothing), read without importing the package: its __init__ imports the Ranker and
    onnxruntime, most of a second that every `cogd recall` and `cogd hook` paid to learn
    that the model is not on disk."""
    import importlib.util

    spec = importlib.util.find_spec("flashrank")
    where = spec.submodule_search_locations if spec is not None else None
    if not where:
        raise ImportError("no module named 'flashrank'")
    config = importlib.util.spec_from_file_location("cogd_flashrank_config",
                                                    Path(next(iter(where))) / "Config.py")
    if config is None or config.loader is None:
        from flashrank.Config import listwise_rankers, model_file_map

        return listwise_rankers, model_file_map
    module = importlib.util.module_from_spec(config)
    config.loader.exec_module(module)
    return module.listwise_rankers, module.model_file_map


def reranker_status(settings: Settings) -> str:
    """One line for `cogd status`: enabled (and from where) or disabled and why."""
    if not settings.reranker.enabled:
        return "disabled: reranker.enabled = false"
    cache_dir = reranker_cache_dir(settings)
    path, why = flashrank_model_file(settings.reranker.model, cache_dir)
    if path is None:
        return str(why)
    return f"enabled: flashrank {settings.reranker.model} from {path.parent}"


class DisabledReranker:
    """Keeps the incoming order: sorts by the given scores (stable), else the input order."""

    enabled = False

    def __init__(self, status: str) -> None:
        self._status = status

    @property
    def status(self) -> str:
        return self._status

    def rerank(
        self, query: str, passages: Sequence[str], scores: Sequence[float] | None = None
    ) -> list[Ranked]:
        given = list(scores) if scores is not None else [0.0] * len(passages)
        ranked = [Ranked(i, float(s)) for i, s in enumerate(given[: len(passages)])]
        return sorted(ranked, key=lambda r: -r.score)


class FlashRankReranker:
    """A FlashRank pairwise cross-encoder over ONNX; scores in FlashRank's own order."""

    enabled = True

    def __init__(
        self,
        model: str,
        cache_dir: Path,
        recorder: CallRecorder | None = None,
        role: str | None = None,
        max_length: int = 512,
    ) -> None:
        path, why = flashrank_model_file(model, cache_dir)
        if path is None:
            raise FileNotFoundError(why)
        self.model = model
        self.cache_dir = cache_dir
        self.max_length = max_length
        self.recorder: CallRecorder = recorder or NullRecorder()
        self.role = role
        self._ranker: Any = None
        self._lock = threading.Lock()

    @property
    def status(self) -> str:
        return f"enabled: flashrank {self.model} from {self.cache_dir / self.model}"

    def _load(self) -> Any:
        with self._lock:
            if self._ranker is None:
                from flashrank import Ranker

                # Ranker() calls logging.basicConfig: give root a handler so that is a no-op
                root = logging.getLogger()
                guard = logging.NullHandler()
                root.addHandler(guard)
                try:
                    self._ranker = Ranker(
                        model_name=self.model, cache_dir=str(self.cache_dir),
                        max_length=self.max_length, log_level="WARNING",
                    )
                finally:
                    root.removeHandler(guard)
            return self._ranker

    def rerank(
        self, query: str, passages: Sequence[str], scores: Sequence[float] | None = None
    ) -> list[Ranked]:
        """Passages by cross-encoder score, best first (incoming scores are ignored)."""
        if not passages:
            return []
        from flashrank import RerankRequest

        start = time.perf_counter()
        error: BaseException | None = None
        try:
            request = RerankRequest(
                query=query, passages=[{"id": i, "text": p} for i, p in enumerate(passages)]
            )
            out = self._load().rerank(request)
            return [Ranked(int(r["id"]), float(r["score"])) for r in out]
        except Exception as exc:
            error = exc
            raise
        finally:
            self.recorder.record(
                CallRecord(
                    provider="flashrank", model=self.model, role=self.role, kind="rerank",
                    tokens_in=sum(len(p) for p in passages) // 4 + len(query) // 4, tokens_out=0,
                    latency_ms=(time.perf_counter() - start) * 1000.0, ok=error is None,
                    error=None if error is None else f"{type(error).__name__}: {error}"[:2000],
                    attempts=1,
                )
            )
