"""``python -m reclaim`` is the ``reclaim`` command."""

import sys

from .cli import main

sys.exit(main())
