"""PyInstaller's entry script: the ``openclaw-desktop`` console script (``ui.launcher``)."""

import sys

from ui.launcher import main

if __name__ == "__main__":
    sys.exit(main())
