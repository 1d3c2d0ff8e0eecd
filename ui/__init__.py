"""The Qt desktop application (PySide6 + qasync). Only this package imports Qt.

``launcher`` is the console script (the window when there is a display, the CLI otherwise);
``app`` the window and its runtime; ``presenters`` bind the SDK and the pure chat state
(``openclaw_desktop.chat``) to ``widgets``.
"""
