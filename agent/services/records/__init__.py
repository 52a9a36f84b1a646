"""The rows every concern shares: turns, sessions and users, identity and goals.
"""
