"""What reaches the next conversation: the handoff, corrections, intentions, workflows and
double takes.
"""
