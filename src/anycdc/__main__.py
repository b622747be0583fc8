"""``python -m anycdc``: the same as the ``anycdc`` command."""

from anycdc.cli import main

raise SystemExit(main())
