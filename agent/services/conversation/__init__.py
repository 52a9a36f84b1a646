"""One turn of the cognitive loop: cognition (context, reply, commit), rollover, emotion
and grounded replies.
"""
