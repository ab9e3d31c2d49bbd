"""python -m replication: the experiment's command line."""

import sys

from replication.cli import main

sys.exit(main())
