"""Work done behind the conversation: consolidation and the idle default-mode network.
"""
