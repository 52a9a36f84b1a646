"""The thinking layer: foresight, predictions, decisions, cognitive models and principles,
open problems and the self-model test.
"""
