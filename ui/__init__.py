"""The Qt desktop application (PySide6 + qasync). Only this package imports Qt.

The windows land with the desktop-app issue; this package holds nothing yet.
"""
