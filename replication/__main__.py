"""python -m replication: the experiment's command line (glibc's allocator set to reuse freed memory first:
core/allocator.py)."""

import sys

from replication.cli import main
from replication.core.allocator import keep_freed_memory

keep_freed_memory()
sys.exit(main())
