"""Model providers: ports (Embedder, LLM, Reranker, CallRecorder) and their adapters.

Nothing is loaded at import time; `agent.providers.factory` builds adapters from Settings.
"""
