"""cogd: a memory for assistants."""

import time

# when the package was first imported: the fallback start of a process's clock where
# /proc is missing (agent.commands.assist.process_age)
IMPORTED_AT = time.monotonic()
