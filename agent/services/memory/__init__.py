"""Memory itself: recall, indexing (embeddings and the lexicon), forgetting and claims.
"""
