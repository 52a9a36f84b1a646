"""The night cycle (seed 001 §8; issue #6): a resumable batch that turns the day table
into holographic blocks, migrates them to the LanceDB cortex, clusters the cortex
(RAPTOR) and cleans the day table by user tier. `cogd night-cycle` runs it.
"""
