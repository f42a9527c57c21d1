"""``python -m toposolve.cli``: the command line."""

from toposolve.cli.main import main

raise SystemExit(main())
