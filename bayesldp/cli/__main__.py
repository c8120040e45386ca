"""``python -m bayesldp.cli``: the ``bayesldp`` command."""

import sys

from bayesldp.cli import main

sys.exit(main())
