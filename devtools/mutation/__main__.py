"""``python -m devtools.mutation [--sample N] [--seed S] [--jobs N|auto] [--timeout S]``: see ``mutate``."""

import sys

from devtools.mutation.mutate import main

sys.exit(main())
